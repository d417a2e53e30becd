//! Packet captures: pcap / pcapng files to frames ([`file`](mod@file)), frames to packet records
//! ([`packet`]), TCP loss-recovery marks ([`tcp`]) and a bottleneck's queue rebuilt from the
//! packets seen entering and leaving it ([`queue`]).
//!
//! ```text
//! CaptureReader::next ─► Frame ─► parse_packet ─► PacketRecord ─┬─► TcpMarker::observe
//!                                                               ├─► INT decoding (L4::Udp payload)
//!                                                               └─► reconstruct_queue ─► Observation
//! ```

pub mod file;
pub mod linktype;
pub mod mpls;
pub mod packet;
pub mod queue;
pub mod skip;
pub mod tcp;
pub mod udp_fast;

pub use file::{CaptureReader, Frame};
pub use linktype::Linktype;
pub use packet::{L4, PacketRecord, TcpFlags, parse_packet};
pub use queue::{QueueTrace, reconstruct_queue, reconstruct_queue_with};
pub use skip::Skipped;
pub use tcp::{TcpMark, TcpMarker};
pub use udp_fast::{UdpFast, udp_to_ports};

#[cfg(test)]
pub(crate) mod testwrite;
