//! TCP as Linux runs it.

pub mod cc;
pub mod rtt;
pub mod rwnd;
