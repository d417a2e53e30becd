//! Whole inputs to answers, as `burstlab decode` and `burstlab detect` run them:
//!
//! ```text
//! capture ─► frames ─► packets ─┬─ UDP to a report port ─► Decoder ─► Observer ─► Detector ─┐
//!                               ├─ (plain) ──────────────────────────► RateDetector + TCP marks ─┤─► Detection
//! entering + leaving captures ──┴─► reconstruct_queue ─► Observations ─► Detector ────────────┘
//! ```
//!
//! Each pass hands control back to its caller every few thousand frames ([`Progress::tick`]):
//! to show progress, and to stop the pass (Ctrl-C) without waiting for the end of the input.
//! A capture cut short inside its last record is read up to the cut and says so
//! ([`truncation_warning`]).

use crate::capture::{
    CaptureReader, Frame, L4, PacketRecord, Skipped, TcpMark, TcpMarker, UdpFast, parse_packet,
    reconstruct_queue_with, udp_to_ports,
};
use crate::decode::Decoder;
use crate::detect::Burst;
use crate::detect::hysteresis::{Detector, HysteresisParams};
use crate::detect::rate::{RateDetector, RateParams};
use crate::error::DecodeError;
use crate::loss::{LossLedger, SeqWidth};
use crate::model::{FlowKey, Report, ReportVersion};
use crate::observation::{Observation, QueueKey, ReportStream};
use crate::observe::Observer;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::io::Read;
use std::ops::ControlFlow;

/// The caller's hook into a long pass: `tick(bytes_done)` runs every [`TICK_FRAMES`] frames or
/// [`TICK_BYTES`] file bytes, whichever comes first (and once at the end of each input), with
/// the file bytes read so far; `ControlFlow::Break` stops the pass, which then returns
/// [`PassError::Stopped`] / [`DetectError::Stopped`]. A plain `FnMut(u64)` is a progress
/// callback that never stops; wrap a function returning `ControlFlow` in [`Stoppable`].
pub trait Progress {
    fn tick(&mut self, bytes_done: u64) -> ControlFlow<()>;
}

impl<F: FnMut(u64)> Progress for F {
    fn tick(&mut self, bytes_done: u64) -> ControlFlow<()> {
        self(bytes_done);
        ControlFlow::Continue(())
    }
}

/// A [`Progress`] that may stop the pass.
pub struct Stoppable<F: FnMut(u64) -> ControlFlow<()>>(pub F);

impl<F: FnMut(u64) -> ControlFlow<()>> Progress for Stoppable<F> {
    fn tick(&mut self, bytes_done: u64) -> ControlFlow<()> {
        (self.0)(bytes_done)
    }
}

/// Frames between ticks: about 0.2–2 ms of work, so a caller that reads a clock on each tick
/// can poll for Ctrl-C every 50 ms at no measurable cost.
pub const TICK_FRAMES: u64 = 1 << 10;
/// File bytes between ticks, for captures of large frames.
pub const TICK_BYTES: u64 = 4 << 20;

/// Counts the frames of a pass and ticks the caller's [`Progress`] on the cadence above.
struct Ticker<'a, P: Progress + ?Sized> {
    progress: &'a mut P,
    count: u64,
    next_bytes: u64,
}

impl<'a, P: Progress + ?Sized> Ticker<'a, P> {
    fn new(progress: &'a mut P) -> Self {
        Ticker { progress, count: 0, next_bytes: TICK_BYTES }
    }

    /// One more frame (or observation); `bytes_done` is the file position for the progress.
    #[inline]
    fn step(&mut self, bytes_done: u64) -> Result<(), Stopped> {
        self.count += 1;
        if !self.count.is_multiple_of(TICK_FRAMES) && bytes_done < self.next_bytes {
            return Ok(());
        }
        self.next_bytes = bytes_done.saturating_add(TICK_BYTES);
        self.now(bytes_done)
    }

    fn now(&mut self, bytes_done: u64) -> Result<(), Stopped> {
        match self.progress.tick(bytes_done) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(Stopped),
        }
    }
}

/// The caller's [`Progress`] asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped;

/// Why a [`decode_capture`] pass did not finish.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// Not a readable pcap/pcapng file, or a record in it that cannot be right.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("stopped by the caller")]
    Stopped,
}

impl From<Stopped> for PassError {
    fn from(_: Stopped) -> Self {
        PassError::Stopped
    }
}

/// Counts of one `decode` pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    pub frames: u64,
    pub reports: u64,
    pub malformed: u64,
    /// Frames that carry no report, by why (never dropped unsaid).
    pub skipped: Skipped,
    pub bytes: u64,
    /// The capture ended inside a record here (see [`CaptureReader::truncated`]); the frames
    /// before it were decoded.
    pub truncated: Option<DecodeError>,
    /// Reports whose sequence number jumped implausibly far ([`crate::loss::SUSPECT_JUMP`]).
    pub suspect_sequence: u64,
    /// Records with impossible lengths, and the first ([`CaptureReader::implausible`]).
    pub implausible_records: u64,
    pub first_implausible: Option<DecodeError>,
}

/// The one line that tells a user some records' lengths cannot be right, and where the first is.
pub fn implausible_warning(input: &str, count: u64, first: &DecodeError) -> String {
    format!(
        "{input}: {count} records have lengths no capture produces (a corrupt file?), \
         the first at {first}; their bytes were read as they are"
    )
}

/// The one line that tells a user their capture was cut short and what was read of it.
pub fn truncation_warning(input: &str, frames: u64, cut: &DecodeError) -> String {
    format!(
        "{input}: the capture ends inside its last record, as one stopped mid-write does \
         ({cut}); read the {frames} complete frames before it"
    )
}

/// Decode every report in a capture. `each(frame, result)` gets the reports of one report
/// packet (frame numbers count from 1, as Wireshark does) or the error that made it malformed;
/// `progress` ticks now and then (see [`Progress`]). A capture that is not a readable
/// pcap/pcapng file is an error with its file offset; a malformed report is not, nor is a
/// last record cut short (`stats.truncated`).
pub fn decode_capture<R: Read>(
    src: R,
    decoder: &mut Decoder,
    ports: &[u16],
    mut each: impl FnMut(u64, Result<&[Report], &DecodeError>),
    mut progress: impl Progress,
) -> Result<DecodeStats, PassError> {
    let mut reader = CaptureReader::new(src)?;
    let mut stats = DecodeStats::default();
    let mut ticker = Ticker::new(&mut progress);
    // Made at the first report: TR v2.0 numbers its reports with 22 bits, the others with 32.
    let mut loss: Option<LossLedger> = None;
    while let Some(frame) = reader.next() {
        let frame = frame?;
        stats.frames += 1;
        let Some((payload, dport)) = report_of(&frame, ports, false).0 else {
            stats.skipped.count(&frame);
            ticker.step(reader.position())?;
            continue;
        };
        match decoder.decode(payload, dport) {
            Ok(reports) => {
                stats.reports += reports.len() as u64;
                for r in reports {
                    let width = if r.version == ReportVersion::V2_0 {
                        SeqWidth::Bits22
                    } else {
                        SeqWidth::Bits32
                    };
                    let stream =
                        ReportStream { switch_id: r.switch_id.unwrap_or(0), hw_id: r.hw_id };
                    loss.get_or_insert_with(|| LossLedger::new(width)).observe(stream, r.seq, 0);
                }
                each(stats.frames, Ok(reports));
            }
            Err(e) => {
                stats.malformed += 1;
                each(stats.frames, Err(&e));
            }
        }
        ticker.step(reader.position())?;
    }
    stats.bytes = reader.position();
    stats.truncated = reader.truncated().cloned();
    stats.suspect_sequence = loss.map_or(0, |l| l.suspect());
    let (n, first) = reader.implausible();
    (stats.implausible_records, stats.first_implausible) = (n, first.cloned());
    ticker.now(stats.bytes)?;
    Ok(stats)
}

fn frame_packet(frame: &Frame<'_>) -> Option<PacketRecord> {
    parse_packet(frame).ok()
}

/// The report payload in `frame`, if any, and — when `want_record` or the fast path could not
/// tell — the frame's packet record. `burstlab replay` sends the same payloads.
pub(crate) fn report_of<'a>(
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
    /// Reports whose sequence number jumped implausibly far and was not followed on from
    /// ([`crate::loss::SUSPECT_JUMP`]): neither received nor counted in `reports_lost`.
    pub suspect_sequence: u64,
    /// Samples deeper than the stated buffer (`--buffer`): kept out of every burst.
    pub suspect_occupancy: u64,
    /// Observations (queue samples) the detector saw; packets for a plain capture.
    pub samples: u64,
    pub bursts: Vec<Burst>,
    /// What the user should know about the input that did not stop the detection: a capture
    /// cut short inside its last record ([`truncation_warning`]).
    pub warnings: Vec<String>,
}

/// Why `detect` could not run on an input.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("{input}: {error}")]
    Decode { input: String, error: DecodeError },
    #[error("{0}")]
    Input(String),
    #[error("stopped by the caller")]
    Stopped,
}

impl From<Stopped> for DetectError {
    fn from(_: Stopped) -> Self {
        DetectError::Stopped
    }
}

/// Run the hysteresis detector over observations (time-ordered per queue); `progress` ticks
/// every [`TICK_FRAMES`] observations with `bytes_done` unchanged. Returns the bursts, the
/// reports lost, the observations seen and those deeper than the stated buffer (suspect; only
/// counted for reported occupancies, see [`Detector::with_reported_occupancy`], so 0 here).
pub fn detect_observations(
    observations: impl IntoIterator<Item = Observation>,
    opts: &DetectOptions,
    seq_width: SeqWidth,
    bytes_done: u64,
    mut progress: impl Progress,
) -> Result<(Vec<Burst>, u64, u64, u64), Stopped> {
    detect_ticking(observations, opts, seq_width, bytes_done, &mut Ticker::new(&mut progress))
}

fn detect_ticking<P: Progress + ?Sized>(
    observations: impl IntoIterator<Item = Observation>,
    opts: &DetectOptions,
    seq_width: SeqWidth,
    bytes_done: u64,
    ticker: &mut Ticker<'_, P>,
) -> Result<(Vec<Burst>, u64, u64, u64), Stopped> {
    let mut det = Detector::new(opts.hysteresis).with_top_k(opts.top_k).with_seq_width(seq_width);
    for o in observations {
        det.push(&o);
        ticker.step(bytes_done)?;
    }
    let (lost, n, suspect) = (det.loss().lost(), det.observations(), det.suspect_occupancy());
    Ok((det.finish(), lost, n, suspect))
}

/// `detect` on one capture: INT reports if any packet to a report port decodes, else a plain
/// capture (which needs `opts.rate`).
pub fn detect_capture<R: Read>(
    src: R,
    input: &str,
    decoder: &mut Decoder,
    opts: &DetectOptions,
    mut progress: impl Progress,
) -> Result<Detection, DetectError> {
    let derr = |error| DetectError::Decode { input: input.to_string(), error };
    let mut reader = CaptureReader::new(src).map_err(derr)?;
    let mut ticker = Ticker::new(&mut progress);
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
                            .with_reported_occupancy()
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
        ticker.step(reader.position())?;
    }
    ticker.now(reader.position())?;
    let mut warnings: Vec<String> =
        reader.truncated().map(|cut| truncation_warning(input, frames, cut)).into_iter().collect();
    if let (n, Some(first)) = reader.implausible() {
        warnings.push(implausible_warning(input, n, first));
    }
    if reports > 0 || malformed > 0 {
        let (bursts, lost, suspect_sequence, suspect_occupancy) = match detector {
            Some(det) => {
                let counts = (det.loss().lost(), det.loss().suspect(), det.suspect_occupancy());
                (det.finish(), counts.0, counts.1, counts.2)
            }
            None => (Vec::new(), 0, 0, 0),
        };
        warnings.extend(suspect_warnings(input, malformed, reports, suspect_sequence));
        if suspect_occupancy > 0 {
            warnings.push(occupancy_warning(input, suspect_occupancy, opts));
        }
        return Ok(Detection {
            input: input.to_string(),
            format: "int-reports",
            reports,
            reports_lost: lost,
            malformed,
            suspect_sequence,
            suspect_occupancy,
            samples,
            bursts,
            warnings,
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
        suspect_sequence: 0,
        suspect_occupancy: 0,
        samples: packets,
        bursts,
        warnings,
    })
}

/// What a user must not miss about an INT capture's reports: none read at all, or numbers that
/// jumped where no loss could explain it.
fn suspect_warnings(input: &str, malformed: u64, reports: u64, suspect: u64) -> Vec<String> {
    let mut out = Vec::new();
    if reports == 0 && malformed > 0 {
        out.push(format!(
            "{input}: all {malformed} report packets were malformed; no queue was observed, so \
             \"0 bursts\" says nothing about this capture (`burstlab decode` shows each error)"
        ));
    }
    if suspect > 0 {
        out.push(format!(
            "{input}: {suspect} reports carry a sequence number more than {} ahead of their \
             stream that the next report does not follow on from (a corrupt field); they were \
             not counted as received nor their gap as lost",
            crate::loss::SUSPECT_JUMP
        ));
    }
    out
}

fn occupancy_warning(input: &str, suspect: u64, opts: &DetectOptions) -> String {
    format!(
        "{input}: {suspect} samples report a queue deeper than the stated buffer ({} B); they \
         cannot be real and were left out of the bursts",
        opts.hysteresis.buffer_bytes.unwrap_or(0)
    )
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
            .filter(|(flow, _)| !b.is_culprit(flow))
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
    mut progress: impl Progress,
) -> Result<Detection, DetectError> {
    let mut done = 0;
    let mut warnings = Vec::new();
    let mut read_all = |src: &mut dyn Read, name: &str| -> Result<Vec<PacketRecord>, DetectError> {
        let derr = |error| DetectError::Decode { input: name.to_string(), error };
        let mut reader = CaptureReader::new(src).map_err(derr)?;
        let mut ticker = Ticker::new(&mut progress);
        let mut out = Vec::new();
        let mut frames = 0u64;
        while let Some(frame) = reader.next() {
            let frame = frame.map_err(derr)?;
            frames += 1;
            // Only forwarded traffic crosses the queue: ARP, and the link-local and multicast
            // control packets each side sends on its own (MLD, ND), are not matched.
            if let Some(rec) =
                frame_packet(&frame).filter(|r| r.flow.is_some_and(|f| forwarded(&f)))
            {
                out.push(rec);
            }
            ticker.step(done + reader.position())?;
        }
        done += reader.position();
        ticker.now(done)?;
        if let Some(cut) = reader.truncated() {
            warnings.push(truncation_warning(name, frames, cut));
        }
        if let (n, Some(first)) = reader.implausible() {
            warnings.push(implausible_warning(name, n, first));
        }
        Ok(out)
    };
    let mut entering = entering;
    let mut leaving = leaving;
    let ins = read_all(&mut entering, input)?;
    let outs = read_all(&mut leaving, &format!("{input} (egress)"))?;
    let key = QueueKey { switch_id: 0, port: 0, queue_id: 0 };
    let mut ticker = Ticker::new(&mut progress);
    let poll = || match ticker.now(done) {
        Ok(()) => ControlFlow::Continue(()),
        Err(stopped) => ControlFlow::Break(stopped),
    };
    let trace = match reconstruct_queue_with(ins, outs, key, opts.drop_horizon_ns, poll) {
        ControlFlow::Continue(trace) => trace,
        ControlFlow::Break(Stopped) => return Err(DetectError::Stopped),
    };
    if trace.observations.is_empty() {
        return Err(DetectError::Input(format!(
            "{input}: no packet of the entering capture was seen in the leaving one \
             ({} unmatched departures); are they the two sides of one device?",
            trace.unmatched_departures
        )));
    }
    let samples = trace.observations.len() as u64;
    let (bursts, _, _, suspect_occupancy) =
        detect_ticking(trace.observations, opts, SeqWidth::Bits32, done, &mut ticker)?;
    if suspect_occupancy > 0 {
        warnings.push(occupancy_warning(input, suspect_occupancy, opts));
    }
    Ok(Detection {
        input: input.to_string(),
        format: "capture-pair",
        reports: 0,
        reports_lost: 0,
        malformed: 0,
        suspect_sequence: 0,
        suspect_occupancy,
        samples,
        bursts,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportFormat, IntRow, ramp_row, write_int_pcap};
    use crate::profile::DEFAULT_REPORT_PORTS;
    use crate::profiles::Profiles;

    /// Reports 1 µs apart whose queue ramps to 1.6 MB and back every 4,000 reports, about
    /// four flows in turn.
    fn rows(n: u32) -> impl Iterator<Item = IntRow> {
        (0..n).map(|k| ramp_row(k, 1, 1 + (k % 4) as u8))
    }

    /// A capture of `n` NoviFlow TR v1.0 reports and the file offset of its last record.
    fn capture(n: u32) -> (Vec<u8>, usize) {
        let mut file = Vec::new();
        write_int_pcap(rows(n - 1), ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        let last = file.len();
        let mut whole = Vec::new();
        write_int_pcap(rows(n), ExportFormat::NoviFlowV1_0, &mut whole).unwrap();
        assert_eq!(whole[..last], file[..]);
        (whole, last)
    }

    fn opts() -> DetectOptions {
        DetectOptions {
            hysteresis: HysteresisParams::from_buffer_percent(2_000_000, 50.0, 25.0, 0, 0).unwrap(),
            rate: None,
            top_k: 3,
            ports: DEFAULT_REPORT_PORTS.to_vec(),
            drop_horizon_ns: 1_000_000,
            tcp_after_ns: 0,
        }
    }

    fn decode(bytes: &[u8], progress: impl Progress) -> Result<DecodeStats, PassError> {
        let mut decoder = Decoder::new(Profiles::builtin());
        decode_capture(bytes, &mut decoder, &DEFAULT_REPORT_PORTS, |_, _| {}, progress)
    }

    fn detect(bytes: &[u8], progress: impl Progress) -> Result<Detection, DetectError> {
        let mut decoder = Decoder::new(Profiles::builtin());
        detect_capture(bytes, "cut.pcap", &mut decoder, &opts(), progress)
    }

    // ---- implausible fields (issue 41) ----

    fn detect_rows(rows: impl Iterator<Item = IntRow>) -> Detection {
        let mut file = Vec::new();
        write_int_pcap(rows, ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        let mut decoder = Decoder::new(Profiles::builtin());
        detect_capture(&file[..], "x.pcap", &mut decoder, &opts(), |_| {}).unwrap()
    }

    #[test]
    fn flipped_sequence_and_occupancy_bits_are_suspect_not_losses_or_bursts() {
        let clean = detect_rows(rows(8_000));
        assert_eq!(
            (clean.reports_lost, clean.suspect_sequence, clean.suspect_occupancy),
            (0, 0, 0)
        );
        assert!(clean.warnings.is_empty());
        let flipped = detect_rows(rows(8_000).map(|mut r| {
            if r.seq == 1_000 {
                r.seq ^= 1 << 30;
            }
            if r.seq == 5_000 {
                // Outside a burst: 671 MB on the 2 MB buffer of `opts`.
                r.occupancy_bytes = 671_088_640;
            }
            r
        }));
        assert_eq!(flipped.reports, 8_000);
        assert_eq!((flipped.suspect_sequence, flipped.suspect_occupancy), (1, 1));
        // The corrupt report's own number is the one missing; not 1,073,741,824.
        assert_eq!(flipped.reports_lost, 1);
        let peaks = |d: &Detection| d.bursts.iter().map(|b| b.peak_bytes).collect::<Vec<_>>();
        assert_eq!(peaks(&flipped), peaks(&clean));
        assert_eq!(flipped.warnings.len(), 2, "{:?}", flipped.warnings);
        assert!(flipped.warnings[0].contains("1 reports carry a sequence number"));
        assert!(flipped.warnings[1].contains("1 samples report a queue deeper than the stated"));
    }

    #[test]
    fn decode_counts_a_suspect_sequence_and_an_impossible_orig_len() {
        let mut file = Vec::new();
        let flip = rows(2_000).map(|mut r| {
            if r.seq == 700 {
                r.seq ^= 1 << 30;
            }
            r
        });
        write_int_pcap(flip, ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        let clean = decode(&file[..], |_| {}).unwrap();
        assert_eq!(
            (clean.reports, clean.suspect_sequence, clean.implausible_records),
            (2_000, 1, 0)
        );
        // orig_len of the third record set to 0, then 2^32 − 1.
        let third = 24 + 2 * (file.len() - 24) / 2_000;
        for orig in [0u32, u32::MAX] {
            file[third + 12..third + 16].copy_from_slice(&orig.to_le_bytes());
            let stats = decode(&file[..], |_| {}).unwrap();
            assert_eq!((stats.reports, stats.implausible_records), (2_000, 1));
            let e = stats.first_implausible.unwrap();
            assert_eq!((e.offset, e.field, e.value), (third + 12, "orig_len", u64::from(orig)));
            let d = detect(&file[..], |_| {}).unwrap();
            let w = d.warnings.iter().find(|w| w.contains("lengths no capture produces")).unwrap();
            assert!(w.contains(&format!("byte {}", third + 12)), "{w}");
        }
    }

    // ---- a capture cut inside its last record ----

    #[test]
    fn decode_reads_every_whole_report_before_a_cut_and_names_it() {
        let (file, last) = capture(50);
        let whole = decode(&file[..], |_| {}).unwrap();
        assert_eq!((whole.frames, whole.reports, whole.truncated), (50, 50, None));
        for cut in [last + 1, last + 15, last + 16, last + 60, file.len() - 1] {
            let stats = decode(&file[..cut], |_| {}).unwrap();
            assert_eq!((stats.frames, stats.reports, stats.malformed), (49, 49, 0), "cut {cut}");
            let e = stats.truncated.unwrap();
            assert_eq!((e.offset, e.value), (last, (cut - last) as u64));
            let line = truncation_warning("cut.pcap", stats.frames, &e);
            assert!(!line.contains('\n'));
            assert!(line.contains(&format!("byte {last}: ")), "{line}");
            assert!(line.contains("49 complete frames"), "{line}");
        }
    }

    #[test]
    fn detect_on_a_cut_capture_warns_once_and_finds_the_same_bursts() {
        let (file, last) = capture(20_001);
        let whole = detect(&file[..last], |_| {}).unwrap();
        assert!(whole.warnings.is_empty());
        assert_eq!(whole.bursts.len(), 5);
        let cut = detect(&file[..last + 40], |_| {}).unwrap();
        assert_eq!(cut.reports, 20_000);
        assert_eq!(cut.bursts.len(), whole.bursts.len());
        assert_eq!(cut.warnings.len(), 1);
        assert!(cut.warnings[0].starts_with("cut.pcap: "), "{}", cut.warnings[0]);
        assert!(cut.warnings[0].contains(&format!("byte {last}: pcap record data = 40")));
    }

    #[test]
    fn detect_pair_warns_for_each_cut_side() {
        let (file, last) = capture(300);
        let d = detect_capture_pair(&file[..last + 3], &file[..last + 70], "in", &opts(), |_| {})
            .unwrap();
        assert_eq!(d.samples, 299);
        assert_eq!(d.warnings.len(), 2);
        assert!(d.warnings[0].starts_with("in: ") && d.warnings[1].starts_with("in (egress): "));
        assert!(d.warnings[0].contains("pcap record header = 3"), "{}", d.warnings[0]);
    }

    #[test]
    fn an_absurd_record_length_mid_capture_is_still_an_error() {
        let (mut file, last) = capture(30);
        let second = 24 + (last - 24) / 29;
        file[second + 8..second + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = decode(&file[..], |_| {}).unwrap_err();
        assert!(matches!(e, PassError::Decode(DecodeError { field: "incl_len", .. })), "{e}");
        assert_eq!(e.to_string().split(':').next(), Some(format!("byte {}", second + 8).as_str()));
        let e = detect(&file[..], |_| {}).unwrap_err();
        assert!(e.to_string().starts_with(&format!("cut.pcap: byte {}", second + 8)), "{e}");
    }

    // ---- ticks and stopping ----

    #[test]
    fn passes_tick_every_tick_frames_and_at_the_end() {
        let (file, _) = capture(3 * TICK_FRAMES as u32 + 5);
        let mut seen = Vec::new();
        decode(&file[..], |done| seen.push(done)).unwrap();
        assert_eq!(seen.len(), 4);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*seen.last().unwrap(), file.len() as u64);
        let mut n = 0;
        detect(&file[..], |_| n += 1).unwrap();
        assert_eq!(n, 4);
    }

    #[test]
    fn a_stoppable_progress_stops_every_pass_at_its_tick() {
        let (file, _) = capture(5 * TICK_FRAMES as u32);
        let stop_at = |k: u32| {
            let mut ticks = 0;
            Stoppable(move |_| {
                ticks += 1;
                if ticks == k { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            })
        };
        let mut frames = 0;
        let mut decoder = Decoder::new(Profiles::builtin());
        let e = decode_capture(&file[..], &mut decoder, &[5900], |f, _| frames = f, stop_at(2));
        assert!(matches!(e, Err(PassError::Stopped)));
        assert_eq!(frames, 2 * TICK_FRAMES, "stopped at the second tick");
        assert!(matches!(detect(&file[..], stop_at(1)), Err(DetectError::Stopped)));
        // Reading the leaving side (7), rebuilding the queue (13, 20), detecting (30).
        for k in [7, 13, 20, 30] {
            let pair = detect_capture_pair(&file[..], &file[..], "in", &opts(), stop_at(k));
            assert!(matches!(pair, Err(DetectError::Stopped)), "tick {k}");
        }
        // The last tick of a pass can stop it too: nothing is returned as if complete.
        assert!(matches!(detect(&file[..], stop_at(6)), Err(DetectError::Stopped)));
    }

    #[test]
    fn large_frames_tick_by_bytes() {
        let mut file = crate::capture::testwrite::pcap_header(false, true, 1, 262_144);
        for k in 0..60 {
            crate::capture::testwrite::pcap_record(&mut file, false, 0, k, &[0; 200_000], 200_000);
        }
        let mut seen = Vec::new();
        decode(&file[..], |done| seen.push(done)).unwrap();
        // 12 MB in 60 frames: a tick past each 4 MiB since the last, and one at the end.
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen[0] >= TICK_BYTES && seen[1] >= seen[0] + TICK_BYTES, "{seen:?}");
    }
}
