//! The receive memory Linux charges a socket (`sk_rmem_alloc`) and what it does when data
//! arrives with the socket over its buffer (`net/ipv4/tcp_input.c`, Linux 5.10 as on the
//! AmLight study's hosts).
//!
//! On only when the receiving host's skb size is given (`FlowSpec::skb_truesize`): each
//! received segment is charged its `truesize` (payload, driver buffers, `struct sk_buff`), the
//! out-of-order queue per range ([`super::ofo`]), data read later on the receive queue. Without
//! it memory is charged as the window model assumes ([`crate::tcp::rwnd`]), which never
//! overcommits the buffer.
//!
//! `tcp_data_queue_ofo()` first calls `tcp_try_rmem_schedule()`: with `sk_rmem_alloc` above
//! `sk_rcvbuf` it runs `tcp_prune_queue()`: `tcp_clamp_window()`, then
//! `tcp_collapse_ofo_queue()` and `tcp_collapse()` of the receive queue (bloated skbs copied
//! into compact ones), then `tcp_prune_ofo_queue()` (the highest out-of-order skbs dropped,
//! `sk_rcvbuf / 8` at a time, and the SACK state reset); if the socket is still over its
//! buffer, the arriving segment is dropped (`TCPOFODrop`). The in-order path
//! (`tcp_data_queue()`) schedules the same way unless the receive queue is empty
//! (`sk_forced_mem_schedule()`), and drops on failure (`TCPRcvQDrop`). Linux 6.2 and later
//! stop pruning below the arriving segment (`tcp_prune_ofo_queue(sk, in_skb)`); 5.10 does
//! not, and neither does this model. The global `tcp_mem` limits are not modelled.

use serde::Serialize;

use super::ofo::{OfoQueue, SKB_MAX_HEAD_DATA};
use crate::tcp::rwnd::{RcvWindow, win_from_space};

/// `SKB_TRUESIZE(SKB_MAX_HEAD_DATA)`: a compact skb `tcp_collapse()` allocates
/// (`alloc_skb(SKB_MAX_ORDER(0, 0))`, one 4096-byte buffer) is charged its 3776 bytes of data,
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` = 256 and `SKB_DATA_ALIGN(sizeof(struct
/// skb_shared_info))` = 320 on x86_64 (`include/linux/skbuff.h`).
pub const COLLAPSED_SKB_TRUESIZE: u64 = SKB_MAX_HEAD_DATA + 256 + 320;

/// What the receive-memory model counted over a run, named as `nstat` names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RmemStats {
    /// The charge of a full-sized segment (`skb_truesize`), bytes.
    pub skb_truesize: u64,
    /// `sk_rcvbuf` at the end of the run, bytes.
    pub rcvbuf_bytes: u64,
    /// The largest `sk_rmem_alloc` seen, bytes.
    pub peak_rmem_alloc_bytes: u64,
    /// `tcp_prune_queue()` calls (`PruneCalled`).
    pub prune_called: u64,
    /// `tcp_prune_ofo_queue()` runs that dropped data (`OfoPruned`).
    pub ofo_pruned: u64,
    /// Out-of-order payload dropped by them, bytes.
    pub ofo_pruned_bytes: u64,
    /// Segments dropped because pruning did not free enough (`TCPOFODrop`, `TCPRcvQDrop`).
    pub rcv_pruned_drops: u64,
}

/// A socket's receive memory.
#[derive(Debug)]
pub(super) struct Rmem {
    /// The charge of a full-sized segment (`rcv_mss` payload).
    skb_truesize: u64,
    /// The charge of the in-order data not read yet.
    rcvq: u64,
    pub(super) stats: RmemStats,
}

impl Rmem {
    pub(super) fn new(skb_truesize: u64) -> Rmem {
        Rmem { skb_truesize, rcvq: 0, stats: RmemStats { skb_truesize, ..RmemStats::default() } }
    }

    /// The charge of a segment of `len` bytes when a full one of `mss` bytes is charged
    /// `skb_truesize`: the driver's buffers are per frame, so a short segment costs its share.
    pub(super) fn truesize(&self, len: u64, mss: u64) -> u64 {
        (self.skb_truesize * len).div_ceil(mss.max(1))
    }

    /// `sk_rmem_alloc`.
    pub(super) fn alloc(&self, ofo: &OfoQueue) -> u64 {
        ofo.truesize() + self.rcvq
    }

    /// In-order data of charge `truesize` joins the receive queue (pulled out of order, or
    /// arriving); `unread` = the receive queue's payload before it.
    pub(super) fn queue(&mut self, truesize: u64, ofo: &OfoQueue) {
        self.rcvq += truesize;
        self.note_peak(ofo);
    }

    pub(super) fn note_peak(&mut self, ofo: &OfoQueue) {
        self.stats.peak_rmem_alloc_bytes = self.stats.peak_rmem_alloc_bytes.max(self.alloc(ofo));
    }

    /// The application read `read` of the `unread` bytes queued in order: their share of the
    /// receive queue's charge is freed.
    pub(super) fn read(&mut self, read: u64, unread: u64) {
        if read >= unread {
            self.rcvq = 0;
        } else if unread > 0 {
            self.rcvq -= (self.rcvq as u128 * read as u128 / unread as u128) as u64;
        }
    }

    /// `tcp_try_rmem_schedule()` for an arriving segment: `true` if it may be queued. With
    /// the socket over its buffer, `tcp_prune_queue()`; returns `false` (drop it) if that did
    /// not bring the socket back within its buffer. `rcv_mss` is one skb's payload for the
    /// prune; `unread` the receive queue's payload.
    pub(super) fn try_schedule(
        &mut self,
        ofo: &mut OfoQueue,
        win: &mut RcvWindow,
        rcv_mss: u64,
        unread: u64,
    ) -> bool {
        if self.alloc(ofo) <= win.rcvbuf() {
            return true;
        }
        if self.prune_queue(ofo, win, rcv_mss, unread) {
            return true;
        }
        self.stats.rcv_pruned_drops += 1;
        false
    }

    /// `tcp_prune_queue()`: `true` once the socket is within its buffer again.
    fn prune_queue(
        &mut self,
        ofo: &mut OfoQueue,
        win: &mut RcvWindow,
        mss: u64,
        unread: u64,
    ) -> bool {
        self.stats.prune_called += 1;
        win.clamp_window(self.alloc(ofo));
        let rcvbuf = win.rcvbuf();
        if self.alloc(ofo) <= rcvbuf {
            return true;
        }
        // `tcp_collapse()` takes an skb whose charge the window model gives more room than
        // its payload (`tcp_win_from_space(sk, skb->truesize) > skb->len`).
        let model = win.model();
        let bloated = |len: u64, truesize: u64| win_from_space(model, truesize) > len;
        let compact = |len: u64| len.div_ceil(SKB_MAX_HEAD_DATA) * COLLAPSED_SKB_TRUESIZE;
        ofo.collapse(rcvbuf, mss, bloated, compact);
        if unread > 0 && bloated(unread, self.rcvq) {
            self.rcvq = self.rcvq.min(compact(unread));
        }
        if self.alloc(ofo) <= rcvbuf {
            return true;
        }
        if !ofo.is_empty() {
            let rcvq = self.rcvq;
            let (bytes, _) = ofo.prune(rcvbuf >> 3, mss, |left| left + rcvq <= rcvbuf);
            self.stats.ofo_pruned += 1;
            self.stats.ofo_pruned_bytes += bytes;
        }
        self.alloc(ofo) <= rcvbuf
    }
}
