//! The `int` table: INT metadata recorded at chosen switch ports (record/int.rs), checked
//! against analytic FIFO delays, the `queue` and `drops` tables, and itself across runs.
use burstlab_sim::record::flow_key::{FiveTuple, IPERF3_PORT, format_ipv4};
use burstlab_sim::record::{Column, Output, Table};
use burstlab_sim::{run, scenario};

fn load(text: &str, sets: &[&str]) -> Output {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    run(&scenario::load(text, &sets).unwrap())
}

fn u64s<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn bools<'a>(t: &'a Table, name: &str) -> &'a [bool] {
    match t.column(name) {
        Some(Column::Bool(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

/// A string column's values, whatever its encoding.
fn strs(t: &Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(Column::Dict { codes, dict }) => {
            codes.iter().map(|&c| dict[c as usize].clone()).collect()
        }
        Some(Column::Str(v)) => v.iter().map(|s| s.clone().unwrap_or_default()).collect(),
        other => panic!("{name}: {other:?}"),
    }
}

fn int(o: &Output) -> &Table {
    o.table("int").unwrap()
}

/// Row indices of the `int` table at egress port `port`.
fn rows_at(t: &Table, port: &str) -> Vec<usize> {
    strs(t, "egress_port_name")
        .iter()
        .enumerate()
        .filter(|(_, p)| *p == port)
        .map(|(i, _)| i)
        .collect()
}

/// The largest occupancy in the `int` table and in the `queue` table.
fn peaks(o: &Output) -> (u64, u64) {
    let max = |t: &Table, c: &str| u64s(t, c).iter().copied().max().unwrap();
    (max(int(o), "queue_occupancy_bytes"), max(o.table("queue").unwrap(), "occupancy_bytes"))
}

// Bottleneck 1538 Mbit/s: a 1500-byte datagram (1538 bytes framed) takes exactly 8 µs.
// Phase A: one source at 3000 Mbit/s (one datagram per 4 µs) for 400 µs builds a queue;
// phase B: one source at 1500 Mbit/s (one per 8 µs, exactly the service rate) keeps it standing.
const FIFO: &str = r#"
name = "int-fifo"
seed = 3
stop = "1s"
[topology]
bottleneck_rate = "1538Mbps"
host_rate = "10Gbps"
rtt = "1ms"
mtu = 1500
buffer = "1MiB"
# Exact port clocks: the latencies below are analytic multiples of the 8 µs service time.
clock_ppm = 0
[[burst]]
sources = 1
rate = "3000Mbps"
start = "0s"
duration = "400us"
packet_size = 1500
jitter = "0s"
clock_ppm = 0
[[burst]]
sources = 1
rate = "1500Mbps"
start = "400us"
duration = "4ms"
packet_size = 1500
jitter = "0s"
clock_ppm = 0
[telemetry]
int_ports = ["swA:swA->swB"]
"#;

const SERVICE_NS: u64 = 8_000;
const GAP_A_NS: u64 = 4_000;
const PACKETS_A: usize = 100;
const PACKETS_B: usize = 500;

// ---- a FIFO, analytically ----

#[test]
fn fifo_growing_queue_latency_is_k_times_service_minus_gap() {
    let o = load(FIFO, &[]);
    let t = int(&o);
    let flow = u64s(t, "flow_id");
    let lat = u64s(t, "hop_latency_ns");
    let a: Vec<u64> = (0..t.rows()).filter(|&i| flow[i] == 0).map(|i| lat[i]).collect();
    assert_eq!(a.len(), PACKETS_A);
    // Datagram k arrives k·4 µs after the first and leaves k·8 µs after it: it waited k·4 µs.
    for (k, &l) in a.iter().enumerate() {
        assert_eq!(l, k as u64 * (SERVICE_NS - GAP_A_NS), "datagram {k}");
    }
}

#[test]
fn fifo_standing_queue_latency_is_occupancy_over_rate() {
    let o = load(FIFO, &[]);
    let t = int(&o);
    let flow = u64s(t, "flow_id");
    let lat = u64s(t, "hop_latency_ns");
    let occ = u64s(t, "queue_occupancy_bytes");
    let b: Vec<usize> = (0..t.rows()).filter(|&i| flow[i] == 1).collect();
    assert_eq!(b.len(), PACKETS_B);
    // Every B datagram waits for the ~50 A datagrams queued at 400 µs: one constant delay of
    // 401 µs ± one phase gap (the sources' random phases, < 4 µs each).
    let l0 = lat[b[0]];
    assert!((397_000..=405_000).contains(&l0), "{l0}");
    // Those whose wait ends before source B stops see a queue refilled at the service rate.
    for &i in &b[..PACKETS_B - 60] {
        assert_eq!(lat[i], l0);
        // Occupancy in wire time (1538 framed bytes per 1500-byte datagram at 8 µs each),
        // less the departing datagram itself.
        let wire_ns = (occ[i] / 1500 - 1) * SERVICE_NS;
        assert!(wire_ns.abs_diff(lat[i]) <= SERVICE_NS, "row {i}: {} B vs {} ns", occ[i], lat[i]);
    }
}

#[test]
fn fifo_every_packet_appears_once_with_its_ports_and_key() {
    let o = load(FIFO, &[]);
    let t = int(&o);
    assert_eq!(t.rows(), PACKETS_A + PACKETS_B);
    assert!(bools(t, "dropped").iter().all(|d| !d));
    assert!(strs(t, "switch").iter().all(|s| s == "swA"));
    assert!(u64s(t, "switch_id").iter().all(|&s| s == 0));
    let ingress = strs(t, "ingress_port_name");
    let flow = u64s(t, "flow_id");
    let flows = o.table("flows").unwrap();
    let src_ip = strs(flows, "src_ip");
    let dst_ip = strs(flows, "dst_ip");
    for i in 0..t.rows() {
        let f = flow[i] as usize;
        assert_eq!(ingress[i], format!("swA->b{f}"));
        assert_eq!(format_ipv4(u64s(t, "src_ip")[i] as u32), src_ip[f]);
        assert_eq!(format_ipv4(u64s(t, "dst_ip")[i] as u32), dst_ip[f]);
        assert_eq!(u64s(t, "protocol")[i], 17);
        assert_eq!(u64s(t, "dst_port")[i], u64::from(IPERF3_PORT));
        assert_eq!(u64s(t, "src_port")[i], 10_000 + f as u64);
        assert_eq!(u64s(t, "packet_bytes")[i], 1500);
    }
    // In-switch port indices are distinct per port and name the same port in both columns.
    let out = u64s(t, "egress_port");
    assert!(out.iter().all(|&p| p == out[0]));
    assert!(
        (0..t.rows()).all(|i| (u64s(t, "ingress_port")[i] == out[0]) == (ingress[i] == "swA->swB"))
    );
    assert_eq!(u64s(t, "report_seq"), (0..t.rows() as u64).collect::<Vec<_>>());
    let ts = f64s(t, "t_s");
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn fifo_max_occupancy_matches_queue_table() {
    let o = load(FIFO, &[]);
    let (int_max, queue_max) = peaks(&o);
    assert!(int_max > 40 * 1500, "{int_max}");
    // The departing packet counts itself, so the deepest departure sees the queue's peak; the
    // queue table resolves it to within its step of two MTUs.
    assert!(
        int_max >= queue_max && int_max - queue_max <= 2 * 1500,
        "int {int_max} vs queue {queue_max}"
    );
}

// ---- drops ----

#[test]
fn overflow_drops_get_rows_matching_the_drops_table() {
    let o = load(FIFO, &["topology.buffer=30000", "burst[0].duration=2ms"]);
    let t = int(&o);
    let at = rows_at(t, "swA->swB");
    assert_eq!(at.len(), t.rows());
    let dropped: Vec<usize> = at.iter().copied().filter(|&i| bools(t, "dropped")[i]).collect();
    let d = o.table("drops").unwrap();
    assert!(d.rows() > 100, "{}", d.rows());
    assert_eq!(dropped.len(), d.rows());
    for (k, &i) in dropped.iter().enumerate() {
        assert_eq!(f64s(t, "t_s")[i], f64s(d, "t_s")[k]);
        assert_eq!(u64s(t, "flow_id")[i], u64s(d, "flow_id")[k]);
        assert_eq!(u64s(t, "hop_latency_ns")[i], 0);
        // Refused because it did not fit: occupancy + datagram > buffer.
        assert!(u64s(t, "queue_occupancy_bytes")[i] + 1500 > 30_000);
    }
    // Forwarded + dropped = every datagram sent.
    let sent: u64 = u64s(o.table("flows").unwrap(), "size_bytes").iter().sum::<u64>() / 1500;
    assert_eq!(t.rows() as u64, sent);
    let (int_max, queue_max) = peaks(&o);
    assert!(queue_max.abs_diff(int_max) <= 2 * 1500, "int {int_max} vs queue {queue_max}");
}

// ---- TCP, several ports and switches ----

const TCP: &str = r#"
name = "int-tcp"
seed = 5
stop = "20s"
[topology]
bottleneck_rate = "100Mbps"
rtt = "10ms"
mtu = 1500
buffer = "50KB"
# Exact port clocks: access links exactly as fast as the bottleneck never queue behind it.
clock_ppm = 0
[[flow]]
cca = "reno"
size = "3MB"
[[flow]]
cca = "cubic"
size = "2MB"
start = "50ms"
[telemetry]
int_ports = ["swA:swA->swB", "swB:swB->swA", "swB:swB->r0", "swB:swB->r1"]
"#;

#[test]
fn tcp_keys_map_back_to_flows_in_both_directions() {
    let o = load(TCP, &[]);
    let t = int(&o);
    assert!(t.rows() > 3000, "{}", t.rows());
    let acks = rows_at(t, "swB->swA");
    assert!(!acks.is_empty());
    for i in 0..t.rows() {
        let key = FiveTuple {
            src_ip: u64s(t, "src_ip")[i] as u32,
            dst_ip: u64s(t, "dst_ip")[i] as u32,
            src_port: u64s(t, "src_port")[i] as u16,
            dst_port: u64s(t, "dst_port")[i] as u16,
            protocol: u64s(t, "protocol")[i] as u8,
        };
        assert_eq!(key.flow_id(), Some(u64s(t, "flow_id")[i] as u32), "row {i}");
        assert_eq!(key.protocol, 6);
    }
    // ACKs (and the data's replies) come from port 5201.
    assert!(acks.iter().all(|&i| u64s(t, "src_port")[i] == u64::from(IPERF3_PORT)));
    assert!(
        rows_at(t, "swA->swB").iter().all(|&i| u64s(t, "dst_port")[i] == u64::from(IPERF3_PORT))
    );
}

#[test]
fn tcp_bottleneck_rows_are_transmitted_plus_dropped() {
    let o = load(TCP, &[]);
    let t = int(&o);
    let dropped = bools(t, "dropped");
    let bott = rows_at(t, "swA->swB");
    let bott_drops = bott.iter().filter(|&&i| dropped[i]).count();
    assert!(bott_drops > 0, "the scenario must overflow the 50 KB buffer");
    assert_eq!(bott_drops, o.table("drops").unwrap().rows());
    assert_eq!(bott_drops as u64, o.summary.ports.iter().map(|p| p.drops).sum::<u64>());
    // Every packet the bottleneck transmitted reached swB's port to its receiver.
    let to_rcv: Vec<usize> =
        rows_at(t, "swB->r0").into_iter().chain(rows_at(t, "swB->r1")).collect();
    assert_eq!(bott.len() - bott_drops, to_rcv.len());
    assert!(to_rcv.iter().all(|&i| !dropped[i]));
    // The access links run at the bottleneck rate, so a packet waits there only behind a larger
    // one still being stored-and-forwarded: less than one full frame's 123.04 µs (1538 B at
    // 100 Mbit/s), and most wait not at all.
    let lat = u64s(t, "hop_latency_ns");
    assert!(to_rcv.iter().all(|&i| lat[i] < 123_040), "{:?}", to_rcv.iter().map(|&i| lat[i]).max());
    assert!(to_rcv.iter().filter(|&&i| lat[i] == 0).count() * 10 > to_rcv.len() * 9);
}

#[test]
fn tcp_report_seq_counts_per_switch_in_emission_order() {
    let o = load(TCP, &[]);
    let t = int(&o);
    let sw = strs(t, "switch");
    let ids = u64s(t, "switch_id");
    let ts = f64s(t, "t_s");
    for (name, id) in [("swA", 0), ("swB", 1)] {
        let rows: Vec<usize> = (0..t.rows()).filter(|&i| sw[i] == name).collect();
        assert!(rows.iter().all(|&i| ids[i] == id));
        let seq: Vec<u64> = rows.iter().map(|&i| u64s(t, "report_seq")[i]).collect();
        assert_eq!(seq, (0..rows.len() as u64).collect::<Vec<_>>(), "{name}");
        assert!(rows.windows(2).all(|w| ts[w[0]] <= ts[w[1]]));
    }
}

#[test]
fn tcp_same_seed_gives_identical_int_rows() {
    let a = load(TCP, &[]);
    let b = load(TCP, &[]);
    assert_eq!(format!("{:?}", int(&a)), format!("{:?}", int(&b)));
}

#[test]
fn tcp_int_does_not_change_the_simulation() {
    let on = load(TCP, &[]);
    let off = load(TCP, &["telemetry.int_ports=[]"]);
    assert_eq!(int(&off).rows(), 0);
    assert_eq!(int(&off).columns.len(), int(&on).columns.len());
    let others = |o: &Output| {
        format!("{:?}", o.tables.iter().filter(|t| t.name != "int").collect::<Vec<_>>())
    };
    assert_eq!(others(&on), others(&off));
}

#[test]
fn tcp_sampling_keeps_every_nth_packet_per_port() {
    let all = load(TCP, &[]);
    let some = load(TCP, &["telemetry.int_sample=3"]);
    let (ta, ts) = (int(&all), int(&some));
    for port in ["swA->swB", "swB->swA", "swB->r0", "swB->r1"] {
        let a = rows_at(ta, port);
        let s = rows_at(ts, port);
        assert_eq!(s.len(), a.len().div_ceil(3), "{port}");
        for (k, &i) in s.iter().enumerate() {
            let j = a[3 * k];
            assert_eq!(f64s(ts, "t_s")[i], f64s(ta, "t_s")[j]);
            assert_eq!(u64s(ts, "flow_id")[i], u64s(ta, "flow_id")[j]);
            assert_eq!(bools(ts, "dropped")[i], bools(ta, "dropped")[j]);
        }
    }
}
