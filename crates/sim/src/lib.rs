//! # burstlab-sim
//!
//! A packet-level network simulator whose TCP makes the decisions a current Linux host makes,
//! built to be fast enough to sweep hundreds of 100 Gbit/s, 200 ms-RTT transfers on a laptop.
//!
//! Layers, bottom up:
//! - [`time`], [`units`], [`latency`]: picosecond time, unit newtypes, host latencies;
//! - [`event`]: the pending-event set, ordered by (time, insertion sequence);
//! - [`packet`]: pooled packet metadata (no payload bytes);
//! - [`net`]: egress ports and their queues, links, switches, graphs and topology presets;
//! - [`tcp`]: the TCP endpoints (SACK, RACK-TLP, PRR, RTO, delayed ACK, receive window) and
//!   [`tcp::cc`], congestion control behind one trait;
//! - [`host`]: a host and what it owns: its sockets (each sender with its timers and its TCP
//!   Small Queues account, each receiver with the application that reads it), its NICs, each
//!   with its qdisc (`fq` or pfifo) in front of its egress port, and its CPU;
//! - [`app`]: traffic (constant-rate UDP bursts, the incast query application);
//! - [`record`]: the columnar output tables, one builder each;
//! - [`scenario`]: TOML scenarios with human units;
//! - [`sim`]: the world and its event loop, handing each event to its port, host or app;
//!   [`observe`]: watching a run as it proceeds.

pub mod latency;
pub mod net;
pub mod packet;
pub mod record;
pub mod rng;
pub mod scenario;
pub mod tcp;
pub mod time;
pub mod units;

pub use time::Time;
pub use units::Rate;

/// Version of this crate, stamped into every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod app;
pub mod event;
pub mod host;
pub mod observe;
pub mod sim;

pub use observe::{Cancelled, IntervalRow, Observer};
pub use sim::{run, run_observed};
