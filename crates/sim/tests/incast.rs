//! N-to-1 incast with persistent connections: the classic collapse to the 200 ms RTO floor
//! when synchronized responses overflow a shallow buffer, and its cure with `rto_min 5ms`
//! (Vasudevan et al., SIGCOMM 2009; issue 4's scenario pairs).
use burstlab_sim::record::Column;
use burstlab_sim::{run, scenario};

/// An incast through a 1 Gbit/s bottleneck of `buffer` with a 100 µs path; `incast` and `tcp`
/// are the lines of its `[[incast]]` and `[incast.tcp]` tables (cubic unless `tcp` says more).
fn incast_toml(host_rate: &str, buffer: &str, incast: &str, tcp: &str) -> String {
    format!(
        r#"
name = "incast"
stop = "30s"
[topology]
bottleneck_rate = "1Gbps"
host_rate = "{host_rate}"
rtt = "100us"
buffer = "{buffer}"
mtu = 1500
[[incast]]
{incast}
[incast.tcp]
cca = "cubic"
{tcp}
"#
    )
}

/// One column of the run's `queries` table.
fn queries_column(text: &str, column: &str) -> Vec<f64> {
    let out = run(&scenario::load(text, &[]).unwrap());
    let q = out.table("queries").unwrap();
    let Some(Column::F64(v)) = q.column(column) else { panic!("queries table without {column}") };
    v.clone()
}

fn qcts(senders: u32, extra: &str) -> Vec<f64> {
    let incast = format!("senders = {senders}\nquery_size = \"1MB\"\nqueries = 20");
    let qct = queries_column(&incast_toml("1Gbps", "128KB", &incast, extra), "qct_s");
    assert_eq!(qct.len(), 20, "every query completes");
    qct
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn incast_one_sender_takes_the_transfer_time() {
    // 1 MB at 1 Gbit/s (1448 payload bytes per 1538 on the wire) ≈ 8.5 ms, plus the request.
    let m = median(qcts(1, ""));
    assert!(m > 0.0085 && m < 0.012, "median QCT {m}");
}

#[test]
fn incast_collapses_to_the_rto_floor_and_rto_min_5ms_cures_it() {
    let slow = qcts(32, "");
    let stalled = slow.iter().filter(|q| **q > 0.1).count();
    assert!(stalled >= 2, "expected RTO stalls with 32 senders: {slow:?}");
    assert!(slow.iter().any(|q| *q > 0.2), "a stall lasts at least the 200 ms RTO floor");
    let fast = qcts(32, "rto_min = \"5ms\"\nquickack = true");
    assert!(fast.iter().all(|q| *q < 0.1), "no 100 ms stalls with rto_min 5ms: {fast:?}");
}

/// QCTs of `queries` tiny queries (4 senders × 1000 B, no queueing), with `serve_time`.
fn tiny_qcts(serve_time: &str) -> Vec<f64> {
    let incast = format!(
        "senders = 4\nquery_size = \"4000B\"\nqueries = 5\nserve_time = {serve_time}\none_sender_host = true"
    );
    queries_column(&incast_toml("1Gbps", "1MB", &incast, ""), "qct_s")
}

#[test]
fn incast_serve_time_starts_the_responses_one_after_another() {
    // The first response starts 1 ms after the request, the 4th 4 × 1 ms after it, so every
    // query ends 4 ms later than with all four written at once — less the ~26 µs the 4th
    // response then waited behind the other three at the sender's 1G NIC.
    let at_once = tiny_qcts("\"0s\"");
    let served = tiny_qcts("\"1ms\"");
    for (a, b) in at_once.iter().zip(&served) {
        assert!((0.00395..=0.004).contains(&(b - a)), "{a} vs {b}");
    }
}

#[test]
fn incast_serve_times_drawn_from_a_measured_list_add_up_per_response() {
    // One sample is the fixed time; with 1 ms and 3 ms drawn, each query's four responses
    // take four draws, so its time moves by 4 to 12 ms, not always by the same.
    assert_eq!(tiny_qcts(r#"["1ms"]"#), tiny_qcts("\"1ms\""));
    let at_once = tiny_qcts("\"0s\"");
    let drawn = tiny_qcts(r#"["1ms", "3ms"]"#);
    let shifts: Vec<f64> = at_once.iter().zip(&drawn).map(|(a, b)| b - a).collect();
    assert!(shifts.iter().all(|s| (0.00395..=0.012).contains(s)), "{shifts:?}");
    assert!(
        shifts.iter().any(|s| (s - shifts[0]).abs() > 1e-3),
        "drawn afresh per query: {shifts:?}"
    );
    assert_eq!(drawn, tiny_qcts(r#"["1ms", "3ms"]"#), "the same seed draws the same");
}

/// Each query's `srtt_at_response_us`: the median over its senders of their SRTT as they began
/// to answer.
fn srtts_at_response(senders: u32, buffer: &str) -> Vec<f64> {
    let incast =
        format!("senders = {senders}\nquery_size = \"1MB\"\nqueries = 4\none_sender_host = true");
    queries_column(&incast_toml("10Gbps", buffer, &incast, ""), "srtt_at_response_us")
}

#[test]
fn the_first_query_starts_on_the_handshakes_rtt_and_later_ones_on_the_queue_it_left() {
    // Before any data the only RTT sample is the SYN-ACK's (`tcp_synack_rtt_meas()`), and the
    // first sample sets SRTT to itself: the 100 µs path, and the 16 SYNs and SYN-ACKs that
    // crossed the 1 Gbit/s bottleneck together (~0.6 µs each).
    let shallow = srtts_at_response(16, "128KB");
    assert!((100.0..112.0).contains(&shallow[0]), "{shallow:?}");
    // 1 MB through a 128 KB queue at 1 Gbit/s: the responses' RTT samples see up to ~1 ms of
    // queueing, and SRTT keeps much of it when the next request arrives.
    assert!(shallow[1..].iter().all(|s| *s > 300.0 && *s < 2_000.0), "{shallow:?}");
    // A lone sender behind a 4 MB buffer: its window, kept from query to query, stands ever
    // deeper in the queue, and so does the SRTT each query starts on (bufferbloat).
    let alone = srtts_at_response(1, "4MB");
    assert!((100.0..102.0).contains(&alone[0]), "{alone:?}");
    assert!(alone.windows(2).all(|w| w[1] > w[0]), "{alone:?}");
    assert_eq!(shallow, srtts_at_response(16, "128KB"), "deterministic");
}

/// Each sender's retransmissions over 40 queries of 8 senders × 128 KB through 128 KB, the
/// responses 100 µs apart in `order`, and the queries' median completion time.
fn retransmits_per_sender(order: &str, seed: u64) -> (Vec<u64>, f64) {
    let incast = format!(
        "senders = 8\nquery_size = \"1MB\"\nqueries = 40\nserve_time = \"100us\"\nserve_order = {order}\none_sender_host = true"
    );
    let text = format!("seed = {seed}\n{}", incast_toml("10Gbps", "128KB", &incast, ""));
    let out = run(&scenario::load(&text, &[]).unwrap());
    let flows = out.table("flows").unwrap();
    let Some(Column::U64(r)) = flows.column("retransmits") else {
        panic!("flows without retransmits")
    };
    let Some(Column::F64(qct)) = out.table("queries").unwrap().column("qct_s") else {
        panic!("queries without qct_s")
    };
    let mut qct = qct.clone();
    qct.sort_by(f64::total_cmp);
    (r.clone(), qct[qct.len() / 2])
}

#[test]
fn a_fixed_order_heaps_the_losses_on_the_last_senders_and_a_shuffled_one_spreads_them() {
    // In sender order every query, senders 6 and 7 start last, into the queue the first six
    // filled, and lose the most: the last above every other sender, the two together above
    // any two of the first six.
    let (fixed, fixed_qct) = retransmits_per_sender("\"fixed\"", 1);
    let mut first_six = fixed[..6].to_vec();
    first_six.sort_unstable_by(|a, b| b.cmp(a));
    assert!(fixed[7] > first_six[0], "{fixed:?}");
    assert!(fixed[6] + fixed[7] > first_six[0] + first_six[1], "{fixed:?}");
    // In a fresh order every query, no sender is always last.
    let (shuffled, shuffled_qct) = retransmits_per_sender("\"shuffled\"", 1);
    let mut ranked: Vec<usize> = (0..8).collect();
    ranked.sort_by_key(|&i| std::cmp::Reverse(shuffled[i]));
    assert!(!(ranked[..2].contains(&6) && ranked[..2].contains(&7)), "{shuffled:?}");
    // Who loses changes; the queries hardly notice (8.78 and 8.73 ms).
    assert!((shuffled_qct / fixed_qct - 1.0).abs() < 0.05, "{fixed_qct} vs {shuffled_qct}");
    assert_eq!(
        shuffled,
        retransmits_per_sender("\"shuffled\"", 1).0,
        "the same seed, the same order"
    );
}
