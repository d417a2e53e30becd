//! The incast (partition/aggregate) application's settings; `sim.rs` runs it.

use crate::latency::Latency;
use crate::tcp::config::FlowSpec;
use crate::time::Time;

/// An incast (partition/aggregate) app: one receiver asks `senders` hosts at once for
/// `query_bytes / senders` bytes each over persistent connections, `queries` times; a query
/// completes when the last byte of the last response arrives.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastSpec {
    pub senders: u32,
    /// Bytes per query, split equally among the senders.
    pub query_bytes: u64,
    pub queries: u32,
    /// Connections open at `start`; the first query follows once they are established.
    pub start: Time,
    /// Think time between one query's completion and the next request.
    pub gap: Time,
    /// Host CPU time per response: the senders start their responses one after another (in
    /// `serve_order`), each one `serve_time` after the previous one and the first one after the
    /// request arrives, as one server process serialized on its CPU (or on Python's GIL) does.
    /// Drawn afresh for each response when it is not fixed. 0: all at once.
    pub serve_time: Latency,
    /// Which sender answers first, second, ...
    pub serve_order: ServeOrder,
    /// All senders' connections leave one host (one NIC and qdisc), as in a test where one
    /// machine runs N server sockets; otherwise each sender is a host of its own.
    pub one_sender_host: bool,
    /// Every sender's TCP settings (`size` and `start` do not apply).
    pub tcp: FlowSpec,
}

/// The order in which an incast's senders start their responses within a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServeOrder {
    /// Sender 0 first, then 1, 2, ... in every query.
    Fixed,
    /// A fresh random order in every query, as the threads of one server process run in the
    /// order its scheduler picks: `burstlab validate`'s server at N = 8–32 keeps little of one
    /// query's order in the next (rank correlation 0.10–0.25, docs/validation-notes.md).
    Shuffled,
}
