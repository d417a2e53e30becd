//! Traffic: constant-rate UDP burst sources and the incast (partition/aggregate) application.
//! (Bulk TCP transfers with iperf3 `-n` semantics are the TCP sender's `size`.)

pub mod burst;
pub mod incast;
