//! `burstlab-telemetry-bench`: the collector path's speed on one core (docs/performance.md).
//!
//! 1. decode + detect: a capture of TR v1.0 reports as AmLight's NoviFlow switches send them
//!    (one 6-word INT hop each), from a pcap file, through `detect` (capture reader, packet
//!    parser, report and INT decoding, timestamp unwrapping, hysteresis detector, attribution,
//!    loss accounting). Target ≥ 5 M reports/s.
//! 2. plain scan: a capture of 1500-byte TCP frames read and parsed to packet records. Target
//!    ≥ 1 GB/s of file.
//!
//! The captures are generated first (deterministically), written to a temporary file and read
//! back through the page cache, best of `--repeat` runs.
//!
//!     cargo run --release -p burstlab-telemetry --bin burstlab-telemetry-bench -- [--reports N] [--plain-mb M] [--repeat R] [--json]

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Instant;

use burstlab_telemetry::capture::{CaptureReader, parse_packet};
use burstlab_telemetry::decode::Decoder;
use burstlab_telemetry::detect::hysteresis::HysteresisParams;
use burstlab_telemetry::export::{ExportFormat, IntRow, PcapWriter, write_int_pcap};
use burstlab_telemetry::model::FlowKey;
use burstlab_telemetry::pipeline::{DetectOptions, detect_capture};
use burstlab_telemetry::profile::DEFAULT_REPORT_PORTS;
use burstlab_telemetry::profiles::Profiles;

struct Args {
    reports: u64,
    plain_mb: u64,
    repeat: u32,
    json: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { reports: 5_000_000, plain_mb: 1024, repeat: 3, json: false };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse().map_err(|_| format!("{name} = {v:?}: expected a positive integer"))
        };
        match flag.as_str() {
            "--reports" => a.reports = num("--reports")?,
            "--plain-mb" => a.plain_mb = num("--plain-mb")?,
            "--repeat" => a.repeat = num("--repeat")?.max(1) as u32,
            "--json" => a.json = true,
            "-h" | "--help" => {
                println!(
                    "usage: burstlab-telemetry-bench [--reports N] [--plain-mb M] [--repeat R] [--json]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(a)
}

fn flow(i: u64) -> FlowKey {
    FlowKey {
        src: IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + (i % 250) as u32 + 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 1)),
        sport: 10_000 + (i % 1000) as u16,
        dport: 5201,
        proto: 6,
    }
}

/// Reports 100 ns apart from one switch port whose queue ramps to 4 MB and drains every
/// millisecond (a burst per ms), packets from 100 flows.
fn int_rows(n: u64) -> impl Iterator<Item = IntRow> {
    (0..n).map(|k| {
        let phase = k % 10_000;
        let occupancy = if phase < 5_000 { phase * 800 } else { (10_000 - phase) * 800 };
        IntRow {
            t_ns: 1_000_000 + k * 100,
            switch_id: 1,
            ingress_port: 3,
            egress_port: 7,
            queue_id: 0,
            occupancy_bytes: occupancy,
            hop_latency_ns: occupancy * 8 / 100,
            flow: flow(k % 100),
            packet_bytes: 9000,
            dropped: false,
            seq: k as u32,
        }
    })
}

fn plain_capture(path: &PathBuf, bytes: u64) -> std::io::Result<u64> {
    let mut pcap = PcapWriter::new(BufWriter::new(File::create(path)?))?;
    // Ethernet + IPv4 + TCP (20 B), 1500-byte IP packets.
    let mut frame = vec![0u8; 1514];
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[14] = 0x45;
    frame[16..18].copy_from_slice(&1500u16.to_be_bytes());
    frame[22] = 64;
    frame[23] = 6;
    frame[26..30].copy_from_slice(&[10, 0, 0, 1]);
    frame[30..34].copy_from_slice(&[10, 0, 0, 2]);
    frame[46] = 0x50;
    let frames = bytes / (frame.len() as u64 + 16);
    for k in 0..frames {
        frame[34..36].copy_from_slice(&(10_000 + (k % 64) as u16).to_be_bytes());
        frame[38..42].copy_from_slice(&((k * 1460) as u32).to_be_bytes());
        pcap.record(k * 1_200, &frame)?;
    }
    pcap.into_inner().flush()?;
    Ok(frames)
}

fn best<T>(repeat: u32, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..repeat {
        let t0 = Instant::now();
        let r = f();
        best = best.min(t0.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("repeat ≥ 1"))
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("burstlab-telemetry-bench: {e}");
        std::process::exit(2);
    });
    let dir = std::env::temp_dir();
    let int_path = dir.join(format!("burstlab-bench-int-{}.pcap", std::process::id()));
    let plain_path = dir.join(format!("burstlab-bench-plain-{}.pcap", std::process::id()));
    let written = File::create(&int_path)
        .and_then(|f| {
            write_int_pcap(int_rows(args.reports), ExportFormat::NoviFlowV1_0, BufWriter::new(f))
        })
        .expect("write the INT capture");
    let int_bytes = std::fs::metadata(&int_path).map(|m| m.len()).unwrap_or(0);
    let opts = DetectOptions {
        hysteresis: HysteresisParams::fixed(1_000_000, 500_000, 0, 0),
        rate: None,
        top_k: 10,
        ports: DEFAULT_REPORT_PORTS.to_vec(),
        drop_horizon_ns: 0,
        tcp_after_ns: 0,
    };
    let (int_s, detection) = best(args.repeat, || {
        let src = File::open(&int_path).expect("open");
        let mut decoder = Decoder::new(Profiles::builtin());
        detect_capture(src, "bench", &mut decoder, &opts, |_| {}).expect("detects")
    });
    assert_eq!(detection.reports, written, "every report decoded");
    let frames = plain_capture(&plain_path, args.plain_mb << 20).expect("write the plain capture");
    let plain_bytes = std::fs::metadata(&plain_path).map(|m| m.len()).unwrap_or(0);
    let (plain_s, parsed) = best(args.repeat, || {
        let mut r = CaptureReader::new(File::open(&plain_path).expect("open")).expect("a pcap");
        let mut n = 0u64;
        while let Some(f) = r.next() {
            n += u64::from(parse_packet(&f.expect("a frame")).is_ok());
        }
        n
    });
    assert_eq!(parsed, frames);
    let _ = std::fs::remove_file(&int_path);
    let _ = std::fs::remove_file(&plain_path);
    let reports_per_s = written as f64 / int_s;
    let gb_per_s = plain_bytes as f64 / plain_s / 1e9;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "decode_detect": {"reports": written, "file_bytes": int_bytes, "bursts": detection.bursts.len(),
                                   "seconds": int_s, "reports_per_s": reports_per_s},
                "plain_scan": {"frames": frames, "file_bytes": plain_bytes, "seconds": plain_s, "gb_per_s": gb_per_s},
            })
        );
    } else {
        println!(
            "decode + detect: {written} TR v1.0 reports ({:.0} MB), {} bursts, {:.3} s → {:.2} M reports/s (target ≥ 5)",
            int_bytes as f64 / 1e6,
            detection.bursts.len(),
            int_s,
            reports_per_s / 1e6
        );
        println!(
            "plain scan:      {frames} frames ({:.2} GB), {:.3} s → {:.2} GB/s (target ≥ 1)",
            plain_bytes as f64 / 1e9,
            plain_s,
            gb_per_s
        );
    }
}
