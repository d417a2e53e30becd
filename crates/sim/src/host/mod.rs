//! Hosts: the machines at the network's edge. A [`Host`] owns the sockets whose endpoint it
//! is ([`socket`]): each connection's sending end with its timers and TCP Small Queues
//! accounting, and each receiving end with the application that reads it ([`rx`]). Its qdisc
//! (`fq` or a FIFO) is its NIC's egress port's (`net::port`). A flow is a pair of sockets on
//! two hosts ([`SocketRef`]) and a row of the `flows` table.

pub mod rx;
pub mod socket;

use crate::packet::NodeId;
use socket::{ReceiverSocket, SenderSocket};

/// A socket: its host (an index into the world's hosts) and its index among that host's
/// senders or receivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketRef {
    pub host: u32,
    pub index: u32,
}

/// A host and its sockets.
pub struct Host {
    pub node: NodeId,
    pub senders: Vec<SenderSocket>,
    pub receivers: Vec<ReceiverSocket>,
}

impl Host {
    pub fn new(node: NodeId) -> Host {
        Host { node, senders: Vec::new(), receivers: Vec::new() }
    }

    /// Open a sending socket here.
    pub fn add_sender(&mut self, s: SenderSocket) -> u32 {
        self.senders.push(s);
        (self.senders.len() - 1) as u32
    }

    /// Open a receiving socket here.
    pub fn add_receiver(&mut self, r: ReceiverSocket) -> u32 {
        self.receivers.push(r);
        (self.receivers.len() - 1) as u32
    }

    /// A segment of sending socket `s` left the host's NIC, or its qdisc dropped it: TCP Small
    /// Queues get its bytes back once its skb is done (`tcp_wfree()`). True if the sender,
    /// throttled by TSQ, may send again.
    #[inline]
    pub fn nic_done(&mut self, s: u32, ip_bytes: u32, skb_end: bool) -> bool {
        self.senders[s as usize].tcp.nic_done(ip_bytes, skb_end)
    }
}
