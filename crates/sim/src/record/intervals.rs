//! The `intervals` table: iperf3-style reports of each TCP flow, one row per flow and
//! interval (iperf3 `-i` semantics: the sender's view, bytes newly acknowledged).

use crate::observe::IntervalRow;
use crate::record::{Column, RowCap, Table};
use crate::time::Time;

/// What an interval row reads from a sender when it closes.
pub struct SenderView {
    /// Bytes acknowledged so far (`snd_una`).
    pub acked: u64,
    pub retransmits: u64,
    pub cwnd_bytes: u64,
    pub srtt_us: u64,
    /// `sk_pacing_rate`, bytes per second.
    pub pacing_rate: u64,
    /// The sender has finished: this interval is its last.
    pub done: bool,
}

/// One flow's open interval: when it began and the sender's counters then.
pub struct FlowInterval {
    start: Time,
    acked: u64,
    retrans: u64,
    pub open: bool,
}

impl FlowInterval {
    /// A flow's first interval opens at `start`; `open` false for a flow not reported.
    pub fn new(start: Time, open: bool) -> FlowInterval {
        FlowInterval { start, acked: 0, retrans: 0, open }
    }
}

/// Column builders of the `intervals` table.
#[derive(Default)]
pub struct Intervals {
    flow: Vec<u64>,
    t0: Vec<f64>,
    t1: Vec<f64>,
    bytes: Vec<u64>,
    bps: Vec<f64>,
    retrans: Vec<u64>,
    cwnd: Vec<u64>,
    srtt: Vec<u64>,
    pacing: Vec<u64>,
    pub cap: RowCap,
}

impl Intervals {
    pub fn new(cap: RowCap) -> Intervals {
        Intervals { cap, ..Intervals::default() }
    }

    /// Close flow `flow`'s open interval at `now` with a row, and open the next one (none
    /// after the sender's last).
    pub fn close(&mut self, flow: usize, iv: &mut FlowInterval, now: Time, s: SenderView) {
        if !iv.open || now <= iv.start {
            return;
        }
        if self.cap.admit(self.flow.len()) {
            self.push(flow, iv, now, &s);
        }
        iv.start = now;
        iv.acked = s.acked;
        iv.retrans = s.retransmits;
        if s.done {
            iv.open = false;
        }
    }

    fn push(&mut self, flow: usize, iv: &FlowInterval, now: Time, s: &SenderView) {
        let bytes = s.acked - iv.acked;
        let span = (now - iv.start).as_secs_f64();
        self.flow.push(flow as u64);
        self.t0.push(iv.start.as_secs_f64());
        self.t1.push(now.as_secs_f64());
        self.bytes.push(bytes);
        self.bps.push(bytes as f64 * 8.0 / span);
        self.retrans.push(s.retransmits - iv.retrans);
        self.cwnd.push(s.cwnd_bytes);
        self.srtt.push(s.srtt_us);
        self.pacing.push(s.pacing_rate.saturating_mul(8));
    }

    pub fn len(&self) -> usize {
        self.flow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }

    /// Row `i`, as an observer sees it.
    pub fn row(&self, i: usize) -> IntervalRow {
        IntervalRow {
            flow_id: self.flow[i],
            t_start_s: self.t0[i],
            t_end_s: self.t1[i],
            bytes: self.bytes[i],
            bits_per_second: self.bps[i],
            retransmits: self.retrans[i],
            cwnd_bytes: self.cwnd[i],
            srtt_us: self.srtt[i],
            pacing_rate_bps: self.pacing[i],
        }
    }

    pub fn finish(self) -> Table {
        Table {
            name: "intervals",
            columns: vec![
                ("flow_id", Column::U64(self.flow)),
                ("t_start_s", Column::F64(self.t0)),
                ("t_end_s", Column::F64(self.t1)),
                ("bytes", Column::U64(self.bytes)),
                ("bits_per_second", Column::F64(self.bps)),
                ("retransmits", Column::U64(self.retrans)),
                ("cwnd_bytes", Column::U64(self.cwnd)),
                ("srtt_us", Column::U64(self.srtt)),
                // The rate Linux computes for every flow (`sk_pacing_rate`), enforced only where
                // Linux paces (BBR, SO_MAX_PACING_RATE, fq).
                ("pacing_rate_bps", Column::U64(self.pacing)),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(acked: u64, retransmits: u64, done: bool) -> SenderView {
        SenderView { acked, retransmits, cwnd_bytes: 10, srtt_us: 5, pacing_rate: 100, done }
    }

    #[test]
    fn rows_count_bytes_and_retransmits_since_the_last_row() {
        let mut t = Intervals::default();
        let mut iv = FlowInterval::new(Time::from_ms(0), true);
        t.close(3, &mut iv, Time::from_ms(500), view(1_000, 2, false));
        t.close(3, &mut iv, Time::from_ms(1_000), view(3_000, 5, true));
        assert_eq!(t.len(), 2);
        let r = t.row(1);
        assert_eq!((r.flow_id, r.bytes, r.retransmits), (3, 2_000, 3));
        assert_eq!(r.bits_per_second, 2_000.0 * 8.0 / 0.5);
        assert_eq!(r.pacing_rate_bps, 800);
        // The sender finished: no further rows.
        t.close(3, &mut iv, Time::from_ms(1_500), view(3_000, 5, true));
        assert_eq!(t.len(), 2);
        assert_eq!(t.finish().rows(), 2);
    }

    #[test]
    fn rows_past_the_cap_are_counted_and_the_next_row_still_spans_one_interval() {
        let mut t = Intervals::new(RowCap::new(1));
        let mut iv = FlowInterval::new(Time::ZERO, true);
        for (ms, acked) in [(100, 1_000), (200, 2_500), (300, 4_500)] {
            t.close(0, &mut iv, Time::from_ms(ms), view(acked, 0, false));
        }
        assert_eq!((t.len(), t.cap.not_kept), (1, 2));
        assert_eq!(t.row(0).bytes, 1_000);
        // The interval after the dropped rows starts where the last one ended.
        t.cap.max = 2;
        t.close(0, &mut iv, Time::from_ms(400), view(5_000, 0, false));
        let r = t.row(1);
        assert_eq!((r.t_start_s, r.bytes), (0.3, 500));
    }

    #[test]
    fn an_empty_span_or_a_closed_flow_writes_no_row() {
        let mut t = Intervals::default();
        let mut iv = FlowInterval::new(Time::from_ms(10), true);
        t.close(0, &mut iv, Time::from_ms(10), view(5, 0, false));
        let mut off = FlowInterval::new(Time::ZERO, false);
        t.close(1, &mut off, Time::from_ms(10), view(5, 0, false));
        assert!(t.is_empty());
    }
}
