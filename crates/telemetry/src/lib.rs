//! burstlab telemetry: read what switches and captures say about queues, find the microbursts,
//! and name the flows that caused them and the flows they hurt (DESIGN.md "Telemetry rules").
//!
//! The layers, bottom up:
//! - [`error`]: the one decode error every parser returns (byte offset, field, value, expected);
//! - [`model`]: what a decoded report says — a flow key and a stack of hops;
//! - [`profile`]: per-device conventions the wire does not carry (cell size, timestamp width);
//! - [`int`]: embedded INT-MD v0.5 / v1.0 / v2.1 stacks inside a data packet;
//! - [`report`]: Telemetry Report v0.5 / v1.0 / v2.0 headers, and [`decode`] which dispatches;
//! - [`capture`]: pcap / pcapng files to packets;
//! - [`observation`]: the queue samples the detector consumes, from reports or the simulator;
//! - [`detect`], [`attribution`], [`loss`]: bursts, their culprits and victims, report loss;
//! - [`collect`]: the same, live: UDP reports received in batches and detected as they come,
//!   and captures replayed as report datagrams;
//! - [`pipeline`]: whole captures to answers as `burstlab decode` and `detect` run them, handing
//!   control back every few thousand frames so a caller can show progress or stop the pass.
//!
//! Parsers are total: any byte string yields a value or a [`DecodeError`], never a panic and
//! never an allocation sized by an untrusted length field. A capture that ends inside a record,
//! as one stopped mid-write does, is read up to the cut, which is reported, not refused.

pub mod attribution;
pub mod capture;
pub mod collect;
pub mod decode;
pub mod detect;
pub mod error;
pub mod export;
pub mod int;
pub mod loss;
pub mod model;
pub mod observation;
pub mod observe;
pub mod pipeline;
pub mod profile;
pub mod profiles;
pub mod report;

pub use error::DecodeError;
pub use model::{FlowKey, Hop, Report, ReportFlags, ReportVersion};
pub use report::{ReportHeader, encode_report, parse_reports};
