//! Scenario files: TOML with human units, Linux names for host settings, `--set` overrides,
//! and errors that name the field, the value and what was expected.
//!
//! Loading is three passes over a `toml::Table`: apply the overrides to the tree, check every
//! key against the schema (`schema.rs`), then read typed values (`parse.rs`, `traffic.rs`)
//! into the engine's [`model`]. The first problem found is the error.

pub mod budget;
pub mod defaults;
mod error;
mod fields;
mod graph;
mod host_cpu;
pub mod model;
mod network;
mod overrides;
mod parse;
mod schema;
mod telemetry;
mod traffic;
pub mod units;
mod websearch;

pub use error::ScenarioError;
pub use model::*;

use std::path::Path;

/// Parses a scenario from TOML `text`, applying `overrides` (`"path=value"`, as given to
/// `--set`) in order before validation.
pub fn load(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let mut root: toml::Table = text.parse().map_err(|e| ScenarioError::syntax(&e, text))?;
    for arg in overrides {
        overrides::apply(&mut root, arg)?;
    }
    let scn = parse::scenario(&root)?;
    // Last: a run that would not fit in memory is refused before anything is built.
    budget::check(&scn, &fields::Fields::new(&root, "scenario"))?;
    Ok(scn)
}

/// Reads and parses the scenario file at `path`; see [`load`].
pub fn load_file(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ScenarioError::Io { path: path.to_owned(), source })?;
    load(&text, overrides)
}
