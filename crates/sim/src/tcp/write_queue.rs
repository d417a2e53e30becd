//! The skbs of written, unsent data (`sk->sk_write_queue`; sent ones move to `tcp_rtx_queue`),
//! as `tcp_sendmsg_locked()` builds them: the application's bytes go into the tail skb until it
//! holds `size_goal`, then into a new one (`tcp_xmit_size_goal()`: `sk_gso_max_size` bounded to
//! half the largest window the peer offered, in whole MSS).
//!
//! Transmission cuts these skbs and, since Linux 6.10, grows the head from the next one before
//! it sends it (`tcp_grow_skb()`, "tcp: try to send bigger TSO packets"; [`WriteQueue::grow_head`]),
//! up to the cwnd quota. Otherwise two skbs are never joined: `tcp_write_xmit()` sends each one
//! whole or, when cwnd or the TSO goal allow less, its head (`tso_fragment()`), and the rest stays
//! an skb of its own at the head of the queue. So the skbs a bulk sender puts on the wire are
//! pieces of 64 KB chunks (7 segments at MTU 9000, 45 at 1500), topped up from the next chunk,
//! not runs of the window's size from wherever the last one ended.
//!
//! Not modelled: `skb_shift()` refusing to grow a head whose page fragments are full
//! (`MAX_SKB_FRAGS`); a bulk writer's 64 KB skbs hold two or three 32 KB page fragments.

use std::collections::VecDeque;

/// The unsent skbs, `[start, end)` in sequence space, in order and contiguous.
#[derive(Clone, Debug, Default)]
pub struct WriteQueue {
    skbs: VecDeque<(u64, u64)>,
    /// The arguments of the last `sync()`, while nothing else changed the queue: the sender
    /// asks for the head several times per skb, and a sync with the same ones changes nothing.
    synced: Option<(u64, u64, u64)>,
}

impl WriteQueue {
    /// Bring the queue up to date: skbs sent whole leave, the one sent in part keeps its unsent
    /// rest, and what the application has written up to `written` fills the tail skb to
    /// `goal` bytes and then new ones. A tail sent in part is a new skb from `snd_nxt`
    /// (`tso_fragment()` left it), which the application may fill to `goal` again.
    pub fn sync(&mut self, snd_nxt: u64, written: u64, goal: u64) {
        if self.synced.replace((snd_nxt, written, goal)) == Some((snd_nxt, written, goal)) {
            return;
        }
        while self.skbs.front().is_some_and(|&(_, end)| end <= snd_nxt) {
            self.skbs.pop_front();
        }
        let goal = goal.max(1);
        let mut end = match self.skbs.back_mut() {
            Some((start, end)) => {
                let from = (*start).max(snd_nxt);
                if *end - from < goal {
                    *end = (from + goal).min(written).max(*end);
                }
                *end
            }
            None => snd_nxt,
        };
        while end < written {
            let next = (end + goal).min(written);
            self.skbs.push_back((end, next));
            end = next;
        }
    }

    /// The head skb's unsent bytes from `snd_nxt`, and whether it is also the tail (the one
    /// the application is still filling).
    pub fn head(&self, snd_nxt: u64) -> Option<(u64, bool)> {
        let &(_, end) = self.skbs.front()?;
        Some((end.saturating_sub(snd_nxt), self.skbs.len() == 1))
    }

    /// `tcp_grow_skb()`: move up to `bytes` from the next skb into the head (the next one only,
    /// once), dropping the next if it is emptied.
    ///
    /// After a `sync()` at this `snd_nxt` the memo of it stays good: every skb still ends past
    /// `snd_nxt` and the tail still ends at `written`, so that sync again would change nothing.
    pub fn grow_head(&mut self, snd_nxt: u64, bytes: u64) {
        if self.skbs.len() < 2 || self.skbs[0].1 <= snd_nxt {
            return;
        }
        if self.synced.is_some_and(|(nxt, _, _)| nxt != snd_nxt) {
            self.synced = None;
        }
        let (start, end) = self.skbs[1];
        let n = bytes.min(end - start);
        self.skbs[0].1 += n;
        self.skbs[1].0 += n;
        if self.skbs[1].0 == end {
            self.skbs.remove(1);
        }
    }

    /// Bytes the application may still copy into the tail skb before it needs a new one
    /// (`tcp_sendmsg_locked()`: `copy = size_goal - skb->len`); 0 without an unsent tail.
    pub fn tail_room(&self, snd_nxt: u64, goal: u64) -> u64 {
        match self.skbs.back() {
            Some(&(start, end)) if end > snd_nxt => goal.saturating_sub(end - start.max(snd_nxt)),
            _ => 0,
        }
    }

    /// Whether `seq` starts a skb of the queue: a segment there cannot join the skb before it.
    ///
    /// The segments asked about were just cut from the head skbs, while the queue may hold a
    /// whole send buffer of skbs (16,384 for 1 GiB), so the first few are looked at before a
    /// binary search.
    pub fn starts_skb(&self, seq: u64) -> bool {
        for &(start, _) in self.skbs.iter().take(4) {
            if start >= seq {
                return start == seq;
            }
        }
        self.skbs.binary_search_by_key(&seq, |&(start, _)| start).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 8948;
    const GOAL: u64 = 7 * MSS;

    #[test]
    fn writes_fill_the_tail_then_new_skbs_of_the_goal() {
        let mut q = WriteQueue::default();
        q.sync(0, 3 * MSS, GOAL);
        assert_eq!(q.head(0), Some((3 * MSS, true)));
        // The next write tops the tail up to 7 segments before it starts a second skb.
        q.sync(0, 10 * MSS, GOAL);
        assert_eq!(q.skbs, [(0, GOAL), (GOAL, 10 * MSS)]);
        assert_eq!(q.head(0), Some((GOAL, false)));
    }

    #[test]
    fn sending_cuts_skbs_and_never_joins_two() {
        let mut q = WriteQueue::default();
        q.sync(0, 14 * MSS, GOAL);
        // Five segments of the first skb leave: its last two stay an skb of their own, and the
        // second skb still starts at segment 7.
        q.sync(5 * MSS, 14 * MSS, GOAL);
        assert_eq!(q.head(5 * MSS), Some((2 * MSS, false)));
        assert!(q.starts_skb(GOAL) && !q.starts_skb(5 * MSS + MSS));
        q.sync(GOAL, 14 * MSS, GOAL);
        assert_eq!(q.head(GOAL), Some((GOAL, true)));
    }

    /// Near the head or deep in a long queue (past the first skbs, where the search answers),
    /// only skb starts are starts.
    #[test]
    fn starts_skb_anywhere_in_a_long_queue() {
        let mut q = WriteQueue::default();
        q.sync(0, 100 * GOAL + 3 * MSS, GOAL);
        for seq in (0..=101 * GOAL).step_by(MSS as usize) {
            let want = seq % GOAL == 0 && seq <= 100 * GOAL;
            assert_eq!(q.starts_skb(seq), want, "seq {seq}");
        }
        assert!(!q.starts_skb(GOAL + 1) && !q.starts_skb(60 * GOAL - 1));
    }

    #[test]
    fn the_head_grows_from_the_next_skb_only() {
        let mut q = WriteQueue::default();
        q.sync(0, 14 * MSS + 3 * MSS, GOAL);
        q.sync(5 * MSS, 17 * MSS, GOAL);
        // 2 segments left of the head; a quota of 6 takes 4 from the next skb.
        q.grow_head(5 * MSS, 4 * MSS);
        assert_eq!(q.head(5 * MSS), Some((6 * MSS, false)));
        assert!(q.starts_skb(11 * MSS));
        // Asked for more than the next skb holds, it takes that skb whole and no more.
        q.sync(11 * MSS, 17 * MSS, GOAL);
        q.grow_head(11 * MSS, 20 * MSS);
        assert_eq!(q.head(11 * MSS), Some((6 * MSS, true)));
    }

    #[test]
    fn the_head_grown_after_a_sync_is_what_that_sync_again_would_leave() {
        // (snd_nxt, written, grow by): the next skb taken in part, taken whole as the tail,
        // taken whole before a tail.
        for (nxt, written, grow) in [
            (5 * MSS, 17 * MSS, 4 * MSS),
            (11 * MSS, 17 * MSS, 20 * MSS),
            (2 * MSS, 40 * MSS, GOAL),
        ] {
            let mut q = WriteQueue::default();
            q.sync(0, written, GOAL);
            q.sync(nxt, written, GOAL);
            q.grow_head(nxt, grow);
            let kept = q.skbs.clone();
            q.sync(nxt, written, GOAL);
            assert_eq!(q.skbs, kept, "memo kept");
            q.synced = None;
            q.sync(nxt, written, GOAL);
            assert_eq!(q.skbs, kept, "synced again at ({nxt}, {written}) after growing by {grow}");
        }
    }

    #[test]
    fn tail_room_is_what_the_writer_may_still_copy_into_the_tail() {
        let mut q = WriteQueue::default();
        assert_eq!(q.tail_room(0, GOAL), 0, "no unsent tail: a new skb is needed");
        q.sync(0, 3 * MSS, GOAL);
        assert_eq!(q.tail_room(0, GOAL), 4 * MSS);
        // Two of its three segments leave: the rest may be filled to a whole goal again.
        assert_eq!(q.tail_room(2 * MSS, GOAL), 6 * MSS);
        q.sync(3 * MSS, 3 * MSS, GOAL);
        assert_eq!(q.tail_room(3 * MSS, GOAL), 0);
    }

    #[test]
    fn a_tail_sent_in_part_is_filled_again_from_where_it_was_cut() {
        let mut q = WriteQueue::default();
        q.sync(0, 4 * MSS, GOAL);
        // Three of its four segments leave; the rest is the tail, and new bytes fill it to a
        // whole goal from segment 3, not from segment 0.
        q.sync(3 * MSS, 20 * MSS, GOAL);
        assert_eq!(q.skbs.front(), Some(&(0, 3 * MSS + GOAL)));
        assert_eq!(q.head(3 * MSS), Some((GOAL, false)));
    }
}
