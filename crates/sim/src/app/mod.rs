//! Traffic: constant-rate UDP burst sources. (Bulk TCP transfers with iperf3 `-n` semantics
//! are the TCP sender's `size`.)

pub mod burst;
pub mod incast;
