//! Traffic: constant-rate UDP burst sources, the incast (partition/aggregate) application, and
//! the web-search workload's flow arrivals. (Bulk TCP transfers with iperf3 `-n` semantics are
//! the TCP sender's `size`.)

pub mod burst;
pub mod incast;
pub mod websearch;
