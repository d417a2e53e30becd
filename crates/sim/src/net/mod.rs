//! The network: egress ports with their queues and links, nodes with static routes, and
//! topology presets.

pub mod fq;
pub mod port;
pub mod queue;
pub mod tbf;
pub mod topology;
