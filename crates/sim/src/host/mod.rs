//! Hosts: the machines at the network's edge. A [`Host`] owns the sockets whose endpoint it
//! is ([`socket`]): each connection's sending end with its timers and TCP Small Queues
//! accounting, and each receiving end with the application that reads it ([`rx`]); and its
//! NICs ([`nic`]), each feeding one egress port through the host's qdisc (`fq`, [`fq`]; or
//! pfifo, the port's own FIFO). A flow is a pair of sockets on two hosts ([`SocketRef`]) and
//! a row of the `flows` table. A host may have a CPU that costs time and a NIC ring that
//! drops ([`cpu`]); without one its CPU is infinite.

pub mod cpu;
pub mod fq;
pub mod nic;
pub mod rx;
pub mod socket;
pub mod tsq;

use crate::net::port::PortId;
use crate::packet::NodeId;
use cpu::{HostCpu, HostCpuSpec};
use nic::Nic;
use socket::{ReceiverSocket, SenderSocket};
use tsq::Resume;

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
    /// Its NICs, one per link, each with its qdisc.
    pub nics: Vec<Nic>,
    /// Its CPU and NIC rings, if the scenario gives it one.
    pub cpu: Option<Box<HostCpu>>,
}

impl Host {
    pub fn new(node: NodeId, nics: Vec<Nic>) -> Host {
        Host { node, senders: Vec::new(), receivers: Vec::new(), nics, cpu: None }
    }

    /// The NIC feeding egress port `port`, if it is one of this host's.
    #[inline]
    pub fn nic(&mut self, port: PortId) -> Option<&mut Nic> {
        self.nics.iter_mut().find(|n| n.port == port)
    }

    /// The `fq` its NIC feeding `port` runs, if any (else the port's FIFO is its qdisc).
    #[inline]
    pub fn qdisc(&self, port: PortId) -> Option<&fq::Fq> {
        self.nics.iter().find(|n| n.port == port).and_then(|n| n.fq.as_deref())
    }

    /// Give the host the CPU `spec` describes, sending from its NIC `nic_port`, unless it has
    /// one already (the first socket opened on a host decides).
    pub fn use_cpu(&mut self, spec: Option<&HostCpuSpec>, nic_port: u32) {
        if let (None, Some(spec)) = (&self.cpu, spec) {
            self.cpu = Some(Box::new(HostCpu::new(spec, nic_port)));
        }
    }

    /// Open a sending socket here. Its NIC reports each of its segments as it leaves
    /// ([`Host::nic_done`]), so TCP Small Queues are in force.
    pub fn add_sender(&mut self, mut s: SenderSocket) -> u32 {
        s.tcp.tsq.enable();
        self.senders.push(s);
        (self.senders.len() - 1) as u32
    }

    /// Open a receiving socket here.
    pub fn add_receiver(&mut self, r: ReceiverSocket) -> u32 {
        self.receivers.push(r);
        (self.receivers.len() - 1) as u32
    }

    /// A segment of sending socket `s` left the host's NIC (`sent`), or its qdisc dropped it:
    /// TCP Small Queues get its bytes back once its skb is done (`tcp_wfree()`). Says when the
    /// TSQ tasklet runs the socket.
    #[inline]
    pub fn nic_done(&mut self, s: u32, ip_bytes: u32, skb_end: bool, sent: bool) -> Resume {
        self.senders[s as usize].tcp.tsq.done(ip_bytes, skb_end, sent)
    }
}
