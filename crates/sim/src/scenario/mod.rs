//! Scenario files: TOML with human units, Linux names for host settings, `--set` overrides,
//! and errors that name the field, the value and what was expected.

pub mod model;

pub use model::*;
