//! Watching a run (`observe.rs`): the observer sees every `intervals` row, in table order,
//! while the run proceeds; it cannot change the records; stopping it stops the run. And the
//! summary's time-weighted mean queue, checked against a burst's analytic triangle.
use std::ops::ControlFlow;

use burstlab_sim::observe::OBSERVE_EVERY;
use burstlab_sim::record::{Column, Output};
use burstlab_sim::{Cancelled, IntervalRow, Observer, Time, run, run_observed, scenario};

/// Two CUBIC flows (one starting late) hit by a burst, reporting every 10 ms: a few hundred
/// rows, interleaved between the flows, some cut short where a flow finishes.
const TWO_FLOWS_AND_A_BURST: &str = r#"
name = "progress"
seed = 3
stop = "5s"
interval = "10ms"

[topology]
bottleneck_rate = "1Gbps"
host_rate = "10Gbps"
rtt = "10ms"
buffer = "256KiB"

[[flow]]
cca = "cubic"
size = "100MB"

[[flow]]
cca = "cubic"
size = "50MB"
start = "120ms"

[[burst]]
sources = 2
rate = "800Mbps"
start = "200ms"
duration = "30ms"
packet_size = 1500
"#;

fn scenario(text: &str) -> scenario::Scenario {
    scenario::load(text, &[]).expect("test scenario is valid")
}

/// Records every row, and the simulation time of every poll.
#[derive(Default)]
struct Recording {
    rows: Vec<IntervalRow>,
    /// (simulation time, rows seen by then) at each poll.
    polls: Vec<(Time, usize)>,
}

impl Observer for Recording {
    fn interval(&mut self, row: &IntervalRow) {
        self.rows.push(*row);
    }
    fn poll(&mut self, now: Time) -> ControlFlow<()> {
        self.polls.push((now, self.rows.len()));
        ControlFlow::Continue(())
    }
}

fn u64s(out: &Output, column: &str) -> Vec<u64> {
    match out.table("intervals").unwrap().column(column) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("intervals.{column}: {other:?}"),
    }
}

fn f64s(out: &Output, column: &str) -> Vec<f64> {
    match out.table("intervals").unwrap().column(column) {
        Some(Column::F64(v)) => v.clone(),
        other => panic!("intervals.{column}: {other:?}"),
    }
}

/// The summary without its wall-clock figures, which differ between any two runs.
fn deterministic_summary(out: &Output) -> String {
    let mut s = out.summary.clone();
    s.engine.wall_s = 0.0;
    s.engine.events_per_s = 0.0;
    serde_json::to_string(&s).unwrap()
}

// ---- rows ----------------------------------------------------------------------------------

#[test]
fn observer_sees_every_interval_row_in_table_order() {
    let scn = scenario(TWO_FLOWS_AND_A_BURST);
    let mut seen = Recording::default();
    let out = run_observed(&scn, &mut seen).expect("never stopped");

    let rows = &seen.rows;
    assert!(rows.len() > 100, "only {} rows", rows.len());
    assert_eq!(rows.iter().map(|r| r.flow_id).collect::<Vec<_>>(), u64s(&out, "flow_id"));
    assert_eq!(rows.iter().map(|r| r.t_start_s).collect::<Vec<_>>(), f64s(&out, "t_start_s"));
    assert_eq!(rows.iter().map(|r| r.t_end_s).collect::<Vec<_>>(), f64s(&out, "t_end_s"));
    assert_eq!(rows.iter().map(|r| r.bytes).collect::<Vec<_>>(), u64s(&out, "bytes"));
    let bps: Vec<f64> = rows.iter().map(|r| r.bits_per_second).collect();
    assert_eq!(bps, f64s(&out, "bits_per_second"));
    assert_eq!(rows.iter().map(|r| r.retransmits).collect::<Vec<_>>(), u64s(&out, "retransmits"));
    assert_eq!(rows.iter().map(|r| r.cwnd_bytes).collect::<Vec<_>>(), u64s(&out, "cwnd_bytes"));
    assert_eq!(rows.iter().map(|r| r.srtt_us).collect::<Vec<_>>(), u64s(&out, "srtt_us"));
    let pacing: Vec<u64> = rows.iter().map(|r| r.pacing_rate_bps).collect();
    assert_eq!(pacing, u64s(&out, "pacing_rate_bps"));
    // Both flows report, and each flow's rows are contiguous in time.
    for flow in 0..2 {
        let mine: Vec<_> = rows.iter().filter(|r| r.flow_id == flow).collect();
        assert!(mine.len() > 10, "flow {flow}: {} rows", mine.len());
        assert!(mine.windows(2).all(|w| w[0].t_end_s == w[1].t_start_s));
    }
}

#[test]
fn rows_arrive_while_the_run_proceeds() {
    let scn = scenario(TWO_FLOWS_AND_A_BURST);
    let mut seen = Recording::default();
    let out = run_observed(&scn, &mut seen).unwrap();
    let events = out.summary.engine.events;
    assert_eq!(seen.polls.len() as u64, events / u64::from(OBSERVE_EVERY));
    // Every row a poll has seen was complete by then, and polls see the table grow: by
    // half-way through the polls, some rows but not all have been handed over.
    let mut at_poll = 0;
    for &(now, count) in &seen.polls {
        assert!(seen.rows[at_poll..count].iter().all(|r| r.t_end_s <= now.as_secs_f64()));
        at_poll = count;
    }
    let (_, mid) = seen.polls[seen.polls.len() / 2];
    assert!(mid > 0 && mid < seen.rows.len(), "{mid} of {} rows at mid-run", seen.rows.len());
}

#[test]
fn an_observer_does_not_change_the_records() {
    let scn = scenario(TWO_FLOWS_AND_A_BURST);
    let plain = run(&scn);
    let watched = run_observed(&scn, &mut Recording::default()).unwrap();
    // Debug text compares floats bit for bit (and NaN equal to itself).
    assert_eq!(format!("{:?}", plain.tables), format!("{:?}", watched.tables));
    assert_eq!(deterministic_summary(&plain), deterministic_summary(&watched));
}

// ---- stopping ------------------------------------------------------------------------------

/// Stops the run at the first poll at or after `at`.
struct StopAt {
    at: Time,
    polls: usize,
}

impl Observer for StopAt {
    fn poll(&mut self, now: Time) -> ControlFlow<()> {
        self.polls += 1;
        if now >= self.at { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    }
}

#[test]
fn stopping_ends_the_run_at_the_next_poll() {
    let scn = scenario(TWO_FLOWS_AND_A_BURST);
    let full = run(&scn).summary.engine;
    let mut stop = StopAt { at: Time::from_ms(150), polls: 0 };
    let Err(Cancelled { at }) = run_observed(&scn, &mut stop) else {
        panic!("the run went on after its observer stopped it")
    };
    // Stopped at the first poll past 150 ms: no further events were processed, so the clock
    // is within one poll's events of the request, far from the end of the run.
    assert!(at >= Time::from_ms(150), "stopped at {at}");
    assert!(at.as_secs_f64() < 0.5 * full.sim_time_s, "stopped at {at} of {}", full.sim_time_s);
    assert!((stop.polls as u64) < full.events / u64::from(OBSERVE_EVERY) / 2);
}

// ---- mean queue ----------------------------------------------------------------------------

/// One UDP source at twice the bottleneck's rate for 20 ms into a deep buffer, nothing else:
/// the queue grows linearly to its peak, then drains at the bottleneck's rate.
const ONE_BURST_INTO_A_DEEP_BUFFER: &str = r#"
name = "triangle"
seed = 1
stop = "1s"

[topology]
bottleneck_rate = "1Gbps"
host_rate = "10Gbps"
rtt = "1ms"
buffer = "64MiB"
clock_ppm = 0

[[burst]]
sources = 1
rate = "2Gbps"
start = "10ms"
duration = "20ms"
packet_size = 1500
jitter = "0s"
clock_ppm = 0
"#;

#[test]
fn mean_queue_is_the_area_under_the_queue_over_the_run() {
    let out = run(&scenario(ONE_BURST_INTO_A_DEEP_BUFFER));
    let port = &out.summary.ports[0];
    assert_eq!(port.drops, 0);
    // In IP bytes per second: 2 Gbit/s arrive, 1 Gbit/s of 1538-byte frames (Ethernet
    // overhead included) leave carrying 1500 IP bytes each.
    let arrive = 2e9 / 8.0;
    let leave = 1e9 / 8.0 * 1500.0 / 1538.0;
    let fill_s = 0.020;
    let peak = (arrive - leave) * fill_s;
    let drain_s = peak / leave;
    let area = 0.5 * peak * (fill_s + drain_s);
    let end = out.summary.engine.sim_time_s;
    let expected = area / end;
    let mean = port.mean_queue_bytes.expect("the bottleneck is recorded");
    assert!((mean / expected - 1.0).abs() < 0.02, "mean {mean:.0} B, expected {expected:.0} B");
    assert!((port.max_queue_bytes as f64 / peak - 1.0).abs() < 0.02);
    // Every flow has a throughput: the burst's delivered bytes over its 20 ms.
    let burst = &out.summary.flows[0];
    assert_eq!(burst.active_s, fill_s);
    let bps = burst.throughput_bps.unwrap();
    assert_eq!(bps, burst.delivered_bytes as f64 * 8.0 / fill_s);
}
