//! Parallel streams (`streams = N`, iperf3 `-P`): N flows with one entry's settings between the
//! same two hosts; window-limited streams add up until the link binds; bad counts fail in one
//! line.

mod common;

use burstlab_sim::record::{Column, Output};
use common::{load, refusal as error};

fn col<'a>(out: &'a Output, table: &str, name: &str) -> &'a Column {
    out.table(table).unwrap().column(name).unwrap()
}

/// 10 Gbit/s, 8 ms, MTU 9000, lossless: GRNET's path. `tcp_rmem` max 6 MiB with
/// `tcp_adv_win_scale = 1` holds each stream to a 3 MiB window, 3.146 Gbit/s at 8 ms.
fn grnet(streams: u32) -> String {
    format!(
        r#"
name = "streams"
stop = "4s"
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "8ms"
mtu = 9000
buffer = "16MiB"
[[flow]]
streams = {streams}
tcp_rmem = "4096 6291456 6291456"
tcp_adv_win_scale = 1
tcp_wmem = "4096 16777216 16777216"
"#
    )
}

/// Each flow's bits per second over the intervals from 2 s (after the ramp) to the end.
fn late_rates(out: &Output, flows: usize) -> Vec<f64> {
    let (Column::U64(ids), Column::F64(t0), Column::U64(bytes)) = (
        col(out, "intervals", "flow_id"),
        col(out, "intervals", "t_start_s"),
        col(out, "intervals", "bytes"),
    ) else {
        panic!("intervals columns")
    };
    let mut sum = vec![0u64; flows];
    let mut secs = vec![0.0f64; flows];
    for i in 0..ids.len() {
        if t0[i] >= 2.0 {
            sum[ids[i] as usize] += bytes[i];
            secs[ids[i] as usize] += 1.0;
        }
    }
    sum.iter().zip(&secs).map(|(&b, &s)| b as f64 * 8.0 / s).collect()
}

#[test]
fn streams_open_flows_between_one_pair_of_hosts() {
    let s = load(&(grnet(3) + "size = \"10B\"\n"));
    assert_eq!(s.flows.len(), 3);
    assert_eq!(s.streams, vec![3]);
    assert_eq!(s.flow_entries(), vec![0, 0, 0]);
    // A size is the whole transfer's (iperf3 -n): split evenly, remainder first.
    let sizes: Vec<_> = s.flows.iter().map(|f| f.size_bytes).collect();
    assert_eq!(sizes, vec![Some(4), Some(3), Some(3)]);
    let view = s.graph_view();
    let hosts: Vec<_> = view.flows.iter().map(|f| (f.src.clone(), f.dst.clone())).collect();
    assert!(hosts.iter().all(|h| *h == ("s0".to_owned(), "r0".to_owned())), "{hosts:?}");
}

#[test]
fn streams_after_a_multi_stream_entry_keep_their_own_hosts() {
    let s = load(&(grnet(2) + "[[flow]]\ncca = \"reno\"\n"));
    assert_eq!(s.flow_entries(), vec![0, 0, 1]);
    assert_eq!(s.flows[2].cca, "reno");
    let view = s.graph_view();
    assert_eq!((view.flows[2].src.as_str(), view.flows[2].dst.as_str()), ("s1", "r1"));
}

#[test]
fn window_limited_streams_add_up_until_the_link_binds() {
    // One window per RTT: 3 MiB / 8 ms = 3.146 Gbit/s of payload per stream.
    let bound = 3.0 * f64::from(1u32 << 20) * 8.0 / 0.008;
    let one = late_rates(&burstlab_sim::run(&load(&grnet(1))), 1);
    assert!((one[0] / bound - 1.0).abs() < 0.05, "1 stream: {one:?} vs {bound}");
    let two = late_rates(&burstlab_sim::run(&load(&grnet(2))), 2);
    for r in &two {
        assert!(
            (r / one[0] - 1.0).abs() < 0.05,
            "2 streams each at one's rate: {two:?} vs {one:?}"
        );
    }
    // Four windows (12.6 Gbit/s) exceed the link: the sum is the link's payload rate,
    // 10 Gbit/s x 8948 / 9038 (MSS over the Ethernet frame with preamble and gap), shared.
    let four = late_rates(&burstlab_sim::run(&load(&grnet(4))), 4);
    let sum: f64 = four.iter().sum();
    let payload = 10e9 * 8948.0 / 9038.0;
    assert!(sum <= payload * 1.001 && sum > payload * 0.97, "4 streams sum {sum} vs {payload}");
    for r in &four {
        assert!((r / (sum / 4.0) - 1.0).abs() < 0.25, "each near a quarter: {four:?}");
    }
}

#[test]
fn bad_stream_counts_fail_in_one_line() {
    for (value, want) in [
        ("0", "scenario.flow[0].streams = 0: expected an integer from 1 to 128 (iperf3 -P)"),
        ("129", "scenario.flow[0].streams = 129: expected an integer from 1 to 128 (iperf3 -P)"),
        ("\"4\"", "scenario.flow[0].streams = \"4\": expected an integer from 1 to 128"),
        ("2.5", "scenario.flow[0].streams = 2.5: expected an integer from 1 to 128"),
    ] {
        let m = error(&grnet(1).replace("streams = 1", &format!("streams = {value}")));
        assert!(m.contains(want), "{value}: {m}");
    }
    let m = error(&(grnet(4) + "size = \"3B\"\n"));
    assert!(m.contains("scenario.flow[0].streams = 4: expected at most size = 3 streams"), "{m}");
    let incast =
        "name = \"i\"\n[[incast]]\nsenders = 2\nquery_size = \"1MB\"\n[incast.tcp]\nstreams = 2\n";
    let m = error(incast);
    assert!(m.contains("scenario.incast[0].tcp.streams = 2: expected no streams here"), "{m}");
}
