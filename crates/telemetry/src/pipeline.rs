//! Whole inputs to answers, as `burstlab decode` and `burstlab detect` run them:
//!
//! ```text
//! capture ─► frames ─► packets ─┬─ UDP to a report port ─► Decoder ─► Observer ─► Detector ─┐
//!                               ├─ (plain) ──────────────────────────► RateDetector + TCP marks ─┤─► Detection
//! entering + leaving captures ──┴─► reconstruct_queue ─► Observations ─► Detector ────────────┘
//! ```

use crate::capture::{
    CaptureReader, Frame, L4, PacketRecord, TcpMark, TcpMarker, UdpFast, parse_packet,
    reconstruct_queue, udp_to_ports,
};
use crate::decode::Decoder;
use crate::detect::Burst;
use crate::detect::hysteresis::{Detector, HysteresisParams};
use crate::detect::rate::{RateDetector, RateParams};
use crate::error::DecodeError;
use crate::loss::SeqWidth;
use crate::model::{FlowKey, Report, ReportVersion};
use crate::observation::{Observation, QueueKey};
use crate::observe::Observer;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::io::Read;

/// Counts of one `decode` pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DecodeStats {
    pub frames: u64,
    pub reports: u64,
    pub malformed: u64,
    pub bytes: u64,
}

/// Progress is reported every this many frames.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Decode every report in a capture. `each(frame, result)` gets the reports of one report
/// packet (frame numbers count from 1, as Wireshark does) or the error that made it malformed;
/// `progress(file_bytes_read)` is called now and then. A capture that is not a readable
/// pcap/pcapng file is an error with its file offset; a malformed report is not.
pub fn decode_capture<R: Read>(
    src: R,
    decoder: &mut Decoder,
    ports: &[u16],
    mut each: impl FnMut(u64, Result<&[Report], &DecodeError>),
    mut progress: impl FnMut(u64),
) -> Result<DecodeStats, DecodeError> {
    let mut reader = CaptureReader::new(src)?;
    let mut stats = DecodeStats::default();
    while let Some(frame) = reader.next() {
        let frame = frame?;
        stats.frames += 1;
        let Some((payload, dport)) = report_of(&frame, ports, false).0 else {
            continue;
        };
        match decoder.decode(payload, dport) {
            Ok(reports) => {
                stats.reports += reports.len() as u64;
                each(stats.frames, Ok(reports));
            }
            Err(e) => {
                stats.malformed += 1;
                each(stats.frames, Err(&e));
            }
        }
        if stats.frames % PROGRESS_EVERY == 0 {
            progress(reader.position());
        }
    }
    stats.bytes = reader.position();
    progress(stats.bytes);
    Ok(stats)
}

fn frame_packet(frame: &Frame<'_>) -> Option<PacketRecord> {
    parse_packet(frame).ok()
}

/// The report payload in `frame`, if any, and — when `want_record` or the fast path could not
/// tell — the frame's packet record.
fn report_of<'a>(
    frame: &Frame<'a>,
    ports: &[u16],
    want_record: bool,
) -> (Option<(&'a [u8], u16)>, Option<PacketRecord>) {
    match udp_to_ports(frame, ports) {
        UdpFast::Report(payload, dport) => (Some((payload, dport)), None),
        UdpFast::Other if !want_record => (None, None),
        _ => {
            let rec = frame_packet(frame);
            (report_payload(&rec, frame.data, ports), rec)
        }
    }
}

/// The UDP payload of a packet sent to one of `ports`, and that port.
fn report_payload<'a>(
    rec: &Option<PacketRecord>,
    data: &'a [u8],
    ports: &[u16],
) -> Option<(&'a [u8], u16)> {
    let rec = rec.as_ref()?;
    let L4::Udp { payload } = &rec.l4 else { return None };
    let dport = rec.flow?.dport;
    ports.contains(&dport).then(|| data.get(payload.clone()).map(|p| (p, dport)))?
}

/// What `detect` needs besides the input.
#[derive(Clone, Debug)]
pub struct DetectOptions {
    pub hysteresis: HysteresisParams,
    /// For plain captures: the link's rate and the timescales; `None` = not a plain-capture run.
    pub rate: Option<RateParams>,
    pub top_k: usize,
    pub ports: Vec<u16>,
    /// Two-capture input: an entering packet not seen leaving within this time was dropped.
    pub drop_horizon_ns: u64,
    /// Plain captures: TCP retransmissions and duplicate ACKs this long after a burst still
    /// count against it (the sender notices a loss about one RTT later).
    pub tcp_after_ns: u64,
}

/// The answer of `detect`, serialized as `burstlab detect --json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Detection {
    pub input: String,
    /// "int-reports", "capture-pair", "plain-capture", "simulation-int", "simulation-queue".
    pub format: &'static str,
    pub reports: u64,
    pub reports_lost: u64,
    pub malformed: u64,
    /// Observations (queue samples) the detector saw; packets for a plain capture.
    pub samples: u64,
    pub bursts: Vec<Burst>,
}

/// Why `detect` could not run on an input.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("{input}: {error}")]
    Decode { input: String, error: DecodeError },
    #[error("{0}")]
    Input(String),
}

/// Run the hysteresis detector over observations (time-ordered per queue).
pub fn detect_observations(
    observations: impl IntoIterator<Item = Observation>,
    opts: &DetectOptions,
    seq_width: SeqWidth,
) -> (Vec<Burst>, u64, u64) {
    let mut det = Detector::new(opts.hysteresis).with_top_k(opts.top_k).with_seq_width(seq_width);
    for o in observations {
        det.push(&o);
    }
    let lost = det.loss().lost();
    let n = det.observations();
    (det.finish(), lost, n)
}

/// `detect` on one capture: INT reports if any packet to a report port decodes, else a plain
/// capture (which needs `opts.rate`).
pub fn detect_capture<R: Read>(
    src: R,
    input: &str,
    decoder: &mut Decoder,
    opts: &DetectOptions,
    mut progress: impl FnMut(u64),
) -> Result<Detection, DetectError> {
    let derr = |error| DetectError::Decode { input: input.to_string(), error };
    let mut reader = CaptureReader::new(src).map_err(derr)?;
    let link = QueueKey { switch_id: 0, port: 0, queue_id: 0 };
    let mut rate = opts.rate.clone().map(|p| RateDetector::new(link, p).with_top_k(opts.top_k));
    let mut marker = TcpMarker::new();
    let mut marks: Vec<(u64, FlowKey, TcpMark)> = Vec::new();
    let mut observer = Observer::default();
    let mut observations: Vec<Observation> = Vec::new();
    // Made at the first report: TR v2.0 numbers its reports with 22 bits, the others with 32.
    let mut detector: Option<Detector> = None;
    let (mut reports, mut malformed, mut packets, mut frames, mut samples) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    while let Some(frame) = reader.next() {
        let frame = frame.map_err(derr)?;
        frames += 1;
        let (report, rec) = report_of(&frame, &opts.ports, rate.is_some());
        if let Some((payload, dport)) = report {
            match decoder.decode(payload, dport) {
                Ok(reports_here) => {
                    reports += reports_here.len() as u64;
                    observations.clear();
                    for r in reports_here {
                        observer.push(r, &mut observations);
                    }
                    let det = detector.get_or_insert_with(|| {
                        let v2 =
                            reports_here.first().is_some_and(|r| r.version == ReportVersion::V2_0);
                        Detector::new(opts.hysteresis)
                            .with_top_k(opts.top_k)
                            .with_seq_width(if v2 { SeqWidth::Bits22 } else { SeqWidth::Bits32 })
                    });
                    for o in &observations {
                        det.push(o);
                    }
                    samples += observations.len() as u64;
                }
                Err(_) => malformed += 1,
            }
        } else if let (Some(rec), Some(rate)) = (&rec, rate.as_mut()) {
            packets += 1;
            rate.push(rec.ts_ns, rec.wire_len, rec.flow);
            if let (Some(flow), L4::Tcp { .. }) = (rec.flow, &rec.l4) {
                let m = marker.observe(rec);
                if m != TcpMark::None {
                    marks.push((rec.ts_ns, flow, m));
                }
            }
        }
        if frames % PROGRESS_EVERY == 0 {
            progress(reader.position());
        }
    }
    progress(reader.position());
    if reports > 0 || malformed > 0 {
        let (bursts, lost) = match detector {
            Some(det) => {
                let lost = det.loss().lost();
                (det.finish(), lost)
            }
            None => (Vec::new(), 0),
        };
        return Ok(Detection {
            input: input.to_string(),
            format: "int-reports",
            reports,
            reports_lost: lost,
            malformed,
            samples,
            bursts,
        });
    }
    let Some(rate) = rate else {
        return Err(DetectError::Input(format!(
            "{input}: no telemetry report on UDP ports {:?} in {frames} frames; for a plain capture \
             give --link-rate (the link's rate, e.g. 10Gbps), for a device's two sides give --egress",
            opts.ports
        )));
    };
    let mut bursts = rate.finish();
    attach_tcp_marks(&mut bursts, &marks, opts.tcp_after_ns, opts.top_k);
    Ok(Detection {
        input: input.to_string(),
        format: "plain-capture",
        reports: 0,
        reports_lost: 0,
        malformed: 0,
        samples: packets,
        bursts,
    })
}

/// Plain captures name their victims by TCP's own loss signals: retransmissions and duplicate
/// ACKs inside a burst or within `after_ns` of its end.
fn attach_tcp_marks(
    bursts: &mut [Burst],
    marks: &[(u64, FlowKey, TcpMark)],
    after_ns: u64,
    top_k: usize,
) {
    for b in bursts.iter_mut() {
        let window = b.start_ns..=b.end_ns.saturating_add(after_ns);
        let mut per_flow: FxHashMap<FlowKey, (u64, u64)> = FxHashMap::default();
        let first = marks.partition_point(|m| m.0 < *window.start());
        for (t, flow, mark) in &marks[first..] {
            if !window.contains(t) {
                break;
            }
            match mark {
                TcpMark::Retransmission => per_flow.entry(*flow).or_default().0 += 1,
                // A duplicate ACK travels receiver → sender; name the data flow it speaks for.
                TcpMark::DupAck { .. } => per_flow.entry(reverse(flow)).or_default().1 += 1,
                TcpMark::None => {}
            }
        }
        let mut victims: Vec<_> = per_flow
            .into_iter()
            .map(|(flow, (retransmits, dup_acks))| crate::attribution::Victim {
                flow,
                delay_ns: 0,
                drops: 0,
                retransmits,
                dup_acks,
            })
            .collect();
        victims.sort_by(|a, b| {
            (b.retransmits, b.dup_acks, a.flow).cmp(&(a.retransmits, a.dup_acks, b.flow))
        });
        victims.truncate(top_k);
        b.victims = victims;
    }
}

/// A packet a router forwards: unicast, not link-local, from a real source.
fn forwarded(f: &FlowKey) -> bool {
    use std::net::IpAddr;
    match (f.src, f.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            !s.is_unspecified() && !d.is_multicast() && !d.is_broadcast() && !d.is_link_local()
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            !s.is_unspecified() && !d.is_multicast() && !d.is_unicast_link_local()
        }
        _ => false,
    }
}

fn reverse(f: &FlowKey) -> FlowKey {
    FlowKey { src: f.dst, dst: f.src, sport: f.dport, dport: f.sport, proto: f.proto }
}

/// `detect` on a device's two sides: `entering` holds the packets arriving at it, `leaving`
/// the packets it sent on (after its queue). The queue is rebuilt packet by packet.
pub fn detect_capture_pair<R1: Read, R2: Read>(
    entering: R1,
    leaving: R2,
    input: &str,
    opts: &DetectOptions,
    mut progress: impl FnMut(u64),
) -> Result<Detection, DetectError> {
    let mut done = 0;
    let mut read_all = |src: &mut dyn Read, name: &str| -> Result<Vec<PacketRecord>, DetectError> {
        let derr = |error| DetectError::Decode { input: name.to_string(), error };
        let mut reader = CaptureReader::new(src).map_err(derr)?;
        let mut out = Vec::new();
        while let Some(frame) = reader.next() {
            let frame = frame.map_err(derr)?;
            // Only forwarded traffic crosses the queue: ARP, and the link-local and multicast
            // control packets each side sends on its own (MLD, ND), are not matched.
            if let Some(rec) =
                frame_packet(&frame).filter(|r| r.flow.is_some_and(|f| forwarded(&f)))
            {
                out.push(rec);
            }
            if (out.len() as u64).is_multiple_of(PROGRESS_EVERY) {
                progress(done + reader.position());
            }
        }
        done += reader.position();
        progress(done);
        Ok(out)
    };
    let mut entering = entering;
    let mut leaving = leaving;
    let ins = read_all(&mut entering, input)?;
    let outs = read_all(&mut leaving, &format!("{input} (egress)"))?;
    let key = QueueKey { switch_id: 0, port: 0, queue_id: 0 };
    let trace = reconstruct_queue(ins, outs, key, opts.drop_horizon_ns);
    if trace.observations.is_empty() {
        return Err(DetectError::Input(format!(
            "{input}: no packet of the entering capture was seen in the leaving one \
             ({} unmatched departures); are they the two sides of one device?",
            trace.unmatched_departures
        )));
    }
    let samples = trace.observations.len() as u64;
    let (bursts, _, _) = detect_observations(trace.observations, opts, SeqWidth::Bits32);
    Ok(Detection {
        input: input.to_string(),
        format: "capture-pair",
        reports: 0,
        reports_lost: 0,
        malformed: 0,
        samples,
        bursts,
    })
}
