//! TCP Small Queues' accounting of one sending socket: the bytes and skbs it has below TCP in
//! its host — in the qdisc, the NIC's queue or on its wire — and not yet freed, as Linux counts
//! them in `sk_wmem_alloc` (`skb_set_owner_w()` when TCP hands an skb down, `tcp_wfree()` when
//! the NIC frees it), and whether the socket stopped sending on them.
//!
//! TCP judges how much may wait (`tcp_small_queue_check()`, `tcp::sender`); the host counts
//! what does: it turns TSQ on for the sockets it opens, and reports every segment that leaves
//! its NIC or that its qdisc drops ([`Wmem::done`]), after which the TSQ tasklet runs the
//! throttled sender ([`Resume`]).

/// One socket's bytes below TCP in its host.
#[derive(Clone, Debug, Default)]
pub struct Wmem {
    /// Bytes handed to the host's qdisc and NIC and not yet freed (`sk_wmem_alloc`).
    bytes: u64,
    /// Bytes of segments already sent whose skb is not done yet.
    freed: u64,
    /// Skbs handed down and not yet freed.
    skbs: u64,
    /// The host `fq`'s `flow_limit` (skbs); 0 without `fq`.
    fq_flow_limit: u64,
    /// Sending stopped on the TSQ limit (`TSQ_THROTTLED`); a NIC completion resumes it.
    throttled: bool,
    /// TSQ is in force: the socket's host reports every segment leaving its NIC.
    enabled: bool,
}

/// When a socket's TSQ tasklet runs after one of its segments left the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Not yet: the segment's skb is not done.
    No,
    /// Now: its skb left the NIC and its bytes came back.
    Now,
    /// After the current event: the qdisc dropped it during a send, and `tcp_wfree()` never
    /// wakes the sender inside the send that dropped it.
    Later,
}

impl Wmem {
    /// A socket's account; `fq_flow_limit` is its host `fq`'s `flow_limit`, 0 without `fq`.
    pub fn new(fq_flow_limit: u64) -> Wmem {
        Wmem { fq_flow_limit, ..Wmem::default() }
    }

    /// The host turns TSQ on: from now on it reports each segment below TCP ([`Wmem::done`]).
    pub fn enable(&mut self) {
        self.enabled = true;
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// TCP handed down a segment of `ip_bytes`, an skb of its own until [`Wmem::joined`].
    #[inline]
    pub fn handed_down(&mut self, ip_bytes: u32) {
        self.bytes += u64::from(ip_bytes);
        self.skbs += 1;
    }

    /// `segs` segments handed down one by one went as one GSO skb.
    #[inline]
    pub fn joined(&mut self, segs: u16) {
        self.skbs -= u64::from(segs) - 1;
    }

    /// Nothing of the socket's is left in the host's qdisc or NIC.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// `tcp_small_queue_check()`'s verdict: more than `limit` bytes wait below TCP, or the
    /// host `fq` flow is full (`flow_plimit`: it would refuse the next skb, which Linux keeps
    /// unsent and retries; we stop before it). A full socket is throttled until
    /// [`Wmem::take_throttled`].
    #[inline]
    pub fn full(&mut self, limit: u64) -> bool {
        let fq_full = self.fq_flow_limit > 0 && self.skbs >= self.fq_flow_limit;
        let full = self.bytes > limit || fq_full;
        self.throttled |= full;
        full
    }

    /// A segment of `ip_bytes` left the host, sent (`sent`) or dropped by its qdisc. Linux
    /// frees a GSO skb once, after its last segment (`skb_end`), and only then does
    /// `tcp_wfree()` return its bytes: a throttled sender wakes to a whole skb's room.
    #[inline]
    pub fn done(&mut self, ip_bytes: u32, skb_end: bool, sent: bool) -> Resume {
        self.freed += u64::from(ip_bytes);
        let returned = skb_end;
        if returned {
            self.bytes -= std::mem::take(&mut self.freed);
            self.skbs = self.skbs.saturating_sub(1);
        }
        match (sent, returned) {
            (false, _) => Resume::Later,
            (true, true) => Resume::Now,
            (true, false) => Resume::No,
        }
    }

    /// The TSQ tasklet: whether the socket was throttled (it no longer is).
    #[inline]
    pub fn take_throttled(&mut self) -> bool {
        std::mem::take(&mut self.throttled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- counting ----

    #[test]
    fn a_gso_skb_returns_its_bytes_once_after_its_last_segment() {
        let mut w = Wmem::new(0);
        w.enable();
        for _ in 0..3 {
            w.handed_down(1500);
        }
        w.joined(3);
        assert!(w.full(4_499), "4,500 bytes below TCP against a 4,499-byte limit");
        assert_eq!(w.done(1500, false, true), Resume::No);
        assert_eq!(w.done(1500, false, true), Resume::No);
        assert!(!w.is_empty(), "an skb's bytes stay counted until its last segment");
        assert_eq!(w.done(1500, true, true), Resume::Now);
        assert!(w.is_empty());
    }

    #[test]
    fn a_drop_by_the_qdisc_resumes_later_even_mid_skb() {
        let mut w = Wmem::new(0);
        w.handed_down(1500);
        w.handed_down(1500);
        w.joined(2);
        assert_eq!(w.done(1500, false, false), Resume::Later);
        assert_eq!(w.done(1500, true, false), Resume::Later);
        assert!(w.is_empty());
    }

    // ---- tcp_small_queue_check ----

    #[test]
    fn full_throttles_until_the_tasklet_takes_it() {
        let mut w = Wmem::new(0);
        w.handed_down(3000);
        assert!(!w.full(3000), "exactly the limit may wait");
        assert!(!w.take_throttled());
        assert!(w.full(2999));
        assert!(w.take_throttled());
        assert!(!w.take_throttled(), "the tasklet runs a throttled socket once");
    }

    #[test]
    fn a_full_fq_flow_is_full_whatever_the_byte_limit() {
        let mut w = Wmem::new(2);
        w.handed_down(100);
        assert!(!w.full(u64::MAX));
        w.handed_down(100);
        assert!(w.full(u64::MAX), "two skbs in a flow whose flow_limit is 2");
        // Without fq the same skbs are only bytes.
        let mut pfifo = Wmem::new(0);
        pfifo.handed_down(100);
        pfifo.handed_down(100);
        assert!(!pfifo.full(u64::MAX));
    }
}
