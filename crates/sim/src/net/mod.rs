//! The network: ports with queues, links, switches, hosts and topology presets.

pub mod queue;
