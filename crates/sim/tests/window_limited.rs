//! Window-limited throughput = window / RTT (seed 003, GRNET) and the window-scale ceiling.
mod common;
use burstlab_sim::record::Column;
use burstlab_sim::scenario::WindowModel;
use burstlab_sim::{Rate, Time, run};
use common::*;

/// Mean throughput over the whole intervals after slow start (Mbit/s). A window-limited flow
/// delivers its window as one train per RTT, so single 1 s intervals hold 4 or 5 trains at
/// 209 ms; the mean over several seconds is the level iperf3's summary line shows.
fn steady_mbps(out: &burstlab_sim::record::Output, skip: usize) -> f64 {
    let iv = out.table("intervals").unwrap();
    let Column::F64(bps) = iv.column("bits_per_second").unwrap() else { panic!() };
    let Column::F64(t0) = iv.column("t_start_s").unwrap() else { panic!() };
    let Column::F64(t1) = iv.column("t_end_s").unwrap() else { panic!() };
    let v: Vec<f64> = bps
        .iter()
        .zip(t0.iter().zip(t1))
        .skip(skip)
        .filter(|(_, (a, b))| *b - *a > 0.999)
        .map(|(x, _)| *x / 1e6)
        .collect();
    assert!(v.len() >= 3, "too few full intervals: {v:?}");
    v.iter().sum::<f64>() / v.len() as f64
}

fn grnet(rmem_max: u64) -> f64 {
    let mut f = flow("cubic", None);
    f.tcp_rmem = [4096, 131072, rmem_max];
    f.tcp_wmem = [4096, 16384, rmem_max];
    f.window_model = WindowModel::AdvWinScale(1);
    let mut s = dumbbell(Rate::from_gbps(10), Time::from_ms(8), 64 << 20, 9000, vec![f]);
    s.stop = Time::from_secs(8);
    let out = run(&s);
    assert_eq!(out.summary.flows[0].retransmits, 0);
    steady_mbps(&out, 2)
}

#[test]
fn grnet_6mib_rmem_gives_half_the_buffer_per_rtt() {
    // 3 MiB per 8 ms = 3,145.73 Mbit/s (seed 003).
    let mbps = grnet(6 << 20);
    assert!((mbps / 3145.73 - 1.0).abs() < 0.02, "{mbps} Mbit/s");
}

#[test]
fn grnet_16mib_rmem_gives_8mib_per_rtt() {
    let mbps = grnet(16 << 20);
    assert!((mbps / 8388.61 - 1.0).abs() < 0.02, "{mbps} Mbit/s");
}

#[test]
fn window_scale_ceiling_at_209ms_is_41_gbps() {
    // 65535 << 14 = 1,073,725,440 B per 209 ms = 41.1 Gbit/s: with 2 GiB socket buffers
    // (tcp_adv_win_scale 1 would allow a 1 GiB window) the scale caps the window first.
    let mut f = flow("cubic", None);
    f.tcp_rmem = [4096, 131072, (1 << 31) - 1];
    f.tcp_wmem = [4096, 16384, (1 << 31) - 1];
    f.rmem_max = (1 << 31) - 1;
    f.initcwnd = 1000;
    let mut s = dumbbell(Rate::from_gbps(100), Time::from_ms(209), 2 << 30, 9000, vec![f]);
    s.stop = Time::from_secs(12);
    let out = run(&s);
    let mbps = steady_mbps(&out, 4);
    let ceiling = 1_073_725_440.0 * 8.0 / 0.209 / 1e6;
    assert!((mbps / ceiling - 1.0).abs() < 0.02, "{mbps} vs {ceiling} Mbit/s");
}
