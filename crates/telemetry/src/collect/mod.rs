//! Live collection (`burstlab collect`, `burstlab replay`): INT reports over UDP received in
//! batches ([`socket`]), decoded and run through the burst detector, attribution and report-loss
//! accounting as they come ([`engine`]), and captures sent again as report datagrams
//! ([`replay`]) so a collector can be fed by a real or simulated network.
//!
//! ```text
//! UDP ─► Receiver (recvmmsg) ─► Collector::ingest ─► Decoder ─► Observer ─► Detector ─► ended bursts
//!                                      └─► Batch (reports, queue samples: columns) ─► the caller stores
//! capture ─► Sender (sendmmsg, paced) ─► UDP
//! ```

pub mod engine;
pub mod replay;
pub mod socket;

pub use engine::{Batch, CollectOptions, Collector, Counters, Gauge, StreamLoss, VERSION_NAMES};
pub use replay::{Pace, ReplayError, ReplayStats, Sender};
pub use socket::Receiver;
