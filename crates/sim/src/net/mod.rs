//! The network: egress ports with their queues, links and clocks, nodes with static routes, and
//! topology presets.

pub mod clock;
pub mod graph;
pub mod port;
pub mod presets;
pub mod queue;
pub mod route;
pub mod tbf;
pub mod topology;
