//! `burstlab decode` / `burstlab detect` / `--int-pcap` behind `burstlab.telemetry`: options in
//! human units are parsed here (with the scenario's unit parser, so "64KB" means the same
//! everywhere), the work runs in `burstlab_telemetry` with the GIL released, and answers cross
//! back as JSON text.
//!
//! While a capture is read the GIL is released; every [`POLL_EVERY`] the pass re-attaches to let
//! Python run its signal handlers (Ctrl-C raises `KeyboardInterrupt` there, which stops the pass
//! and propagates) and to report progress.

use std::cell::RefCell;
use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr};
use std::ops::ControlFlow;

use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Deserialize;

use burstlab_sim::scenario::units::{parse_rate, parse_size, parse_time};
use burstlab_telemetry::DecodeError;
use burstlab_telemetry::decode::{Decoder, ErrorLine, ReportLine};
use burstlab_telemetry::detect::hysteresis::{Fall, HysteresisParams, Rise};
use burstlab_telemetry::detect::rate::{RateParams, default_timescales};
use burstlab_telemetry::export::{ExportFormat, IntRow, write_int_pcap as write_pcap};
use burstlab_telemetry::loss::SeqWidth;
use burstlab_telemetry::model::{FlowKey, Report};
use burstlab_telemetry::observation::{Observation, QueueKey, ReportStream};
use burstlab_telemetry::pipeline::{
    self, DetectError, DetectOptions, Detection, PassError, Stoppable, truncation_warning,
};
use burstlab_telemetry::profile::DEFAULT_REPORT_PORTS;
use burstlab_telemetry::profiles::Profiles;

use crate::reattach::Reattach;

/// `burstlab.errors.TelemetryInputError(message)`.
pub(crate) fn input_error(py: Python<'_>, message: String) -> PyErr {
    let class = py.import("burstlab.errors").and_then(|m| m.getattr("TelemetryInputError"));
    match class.and_then(|c| c.call1((message.as_str(),))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

pub(crate) fn profiles(py: Python<'_>, text: Option<&str>) -> PyResult<Profiles> {
    match text {
        None => Ok(Profiles::builtin()),
        Some(t) => Profiles::from_toml_str(t).map_err(|e| input_error(py, format!("profile: {e}"))),
    }
}

/// The capture reader buffers on its own; a `BufReader` would only add a copy.
fn open(py: Python<'_>, path: &str) -> PyResult<File> {
    File::open(path).map_err(|e| input_error(py, format!("{path}: {e}")))
}

/// Python's side of a pass run with the GIL released: on a [`pipeline::Progress`] tick, when
/// [`Reattach`] says it is time, run the signal handlers and report progress. The first Python
/// error stops the pass and is kept to be raised.
struct Poll<'a> {
    progress: Option<&'a Py<PyAny>>,
    total: u64,
    reattach: Reattach,
}

impl<'a> Poll<'a> {
    fn new(progress: Option<&'a Py<PyAny>>, total: u64) -> Self {
        Poll { progress, total, reattach: Reattach::new() }
    }

    fn tick(&mut self, done: u64) -> ControlFlow<()> {
        let (progress, total) = (self.progress, self.total);
        self.reattach.every(|py| match progress.map(|p| p.call1(py, (done, total))) {
            // Progress is best effort: a failing callback must not lose the answer, but
            // Ctrl-C (or an exit) raised while it ran must not be lost either.
            Some(Err(e)) if !e.is_instance_of::<PyException>(py) => Err(e),
            _ => Ok(()),
        })
    }

    fn fail(&mut self, result: PyResult<()>) -> ControlFlow<()> {
        self.reattach.fail(result)
    }

    fn failed(&self) -> bool {
        self.reattach.failed()
    }

    /// The error a stopped pass ends with: the Python one that stopped it.
    fn stopped(self) -> PyErr {
        self.reattach.stopped("telemetry pass")
    }
}

/// Lines handed to Python's `batch` callback at a time.
const BATCH_LINES: usize = 4096;

/// `decode`'s output on its way to Python: JSON lines, flushed to `batch` in batches.
struct DecodeSink<'a> {
    batch: &'a Py<PyAny>,
    lines: Vec<String>,
    done: u64,
    poll: Poll<'a>,
}

impl DecodeSink<'_> {
    fn push(&mut self, frame: u64, result: Result<&[Report], &DecodeError>) {
        match result {
            Ok(reports) => self.lines.extend(reports.iter().map(|report| {
                serde_json::to_string(&ReportLine { frame, report }).unwrap_or_default()
            })),
            Err(error) => self
                .lines
                .push(serde_json::to_string(&ErrorLine { frame, error }).unwrap_or_default()),
        }
        if self.lines.len() >= BATCH_LINES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.poll.failed() {
            self.lines.clear();
            return;
        }
        let (batch, done, total) = (self.batch, self.done, self.poll.total);
        let lines = &mut self.lines;
        let result = Python::attach(|py| {
            let list = PyList::new(py, lines.drain(..))?;
            batch.call1(py, (list, done, total)).map(drop)
        });
        // A failing write (a closed pipe, Ctrl-C while Python ran) stops the pass at the next tick.
        let _ = self.poll.fail(result);
    }

    fn tick(&mut self, done: u64) -> ControlFlow<()> {
        self.done = done;
        self.poll.tick(done)
    }
}

/// Decode every report in a capture. `batch(lines, bytes_done, bytes_total)` is called with
/// JSON lines (reports and malformed-report errors) every few thousand reports; an exception it
/// raises (or Ctrl-C) stops the pass and propagates. Returns `{"frames", "reports",
/// "malformed", "skipped", "bytes", "warning", "suspect_sequence", "implausible_records",
/// "implausible"}`, `skipped` the frames without a report by why (`unreadable`, `not_ip`,
/// `not_udp`, `other_port`), `warning` a line naming where a capture cut short ends (or `None`),
/// `implausible` a line naming the first record with impossible lengths (or `None`).
#[pyfunction]
#[pyo3(signature = (path, profiles_toml, ports, batch))]
pub fn decode_capture<'py>(
    py: Python<'py>,
    path: &str,
    profiles_toml: Option<&str>,
    ports: Option<Vec<u16>>,
    batch: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut decoder = Decoder::new(profiles(py, profiles_toml)?);
    let ports = ports.unwrap_or_else(|| DEFAULT_REPORT_PORTS.to_vec());
    let total = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let src = open(py, path)?;
    let batch = batch.unbind();
    let (result, sink) = py.detach(|| {
        let sink = RefCell::new(DecodeSink {
            batch: &batch,
            lines: Vec::new(),
            done: 0,
            poll: Poll::new(None, total),
        });
        let result = pipeline::decode_capture(
            src,
            &mut decoder,
            &ports,
            |frame, r| sink.borrow_mut().push(frame, r),
            Stoppable(|done| sink.borrow_mut().tick(done)),
        );
        let mut sink = sink.into_inner();
        // The reports before a malformed capture's error are printed too, as tcpdump prints
        // the packets before it.
        if !matches!(result, Err(PassError::Stopped)) {
            sink.flush();
        }
        (result, sink)
    });
    if sink.poll.failed() {
        return Err(sink.poll.stopped());
    }
    let stats = match result {
        Ok(stats) => stats,
        Err(PassError::Decode(e)) => return Err(input_error(py, format!("{path}: {e}"))),
        Err(PassError::Stopped) => return Err(sink.poll.stopped()),
    };
    let out = PyDict::new(py);
    out.set_item("frames", stats.frames)?;
    out.set_item("reports", stats.reports)?;
    out.set_item("malformed", stats.malformed)?;
    let skipped = PyDict::new(py);
    let s = &stats.skipped;
    let reasons = [("unreadable", s.unreadable), ("not_ip", s.not_ip), ("not_udp", s.not_udp)];
    for (reason, n) in reasons.into_iter().chain([("other_port", s.other_port)]) {
        skipped.set_item(reason, n)?;
    }
    out.set_item("skipped", skipped)?;
    out.set_item("bytes", stats.bytes)?;
    let warning = stats.truncated.as_ref().map(|cut| truncation_warning(path, stats.frames, cut));
    out.set_item("warning", warning)?;
    out.set_item("suspect_sequence", stats.suspect_sequence)?;
    out.set_item("implausible_records", stats.implausible_records)?;
    let implausible = stats
        .first_implausible
        .as_ref()
        .map(|e| pipeline::implausible_warning(path, stats.implausible_records, e));
    out.set_item("implausible", implausible)?;
    Ok(out)
}

/// `burstlab.telemetry.detect` options as the Python side sends them (strings in human units).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOptions {
    rise: Option<String>,
    fall: Option<String>,
    buffer: Option<String>,
    min_duration: Option<String>,
    merge_gap: Option<String>,
    link_rate: Option<String>,
    timescales: Option<Vec<String>>,
    rate_threshold: Option<f64>,
    top: Option<usize>,
    pub(crate) profiles_toml: Option<String>,
    ports: Option<Vec<u16>>,
}

/// Default fraction of the link rate that makes a window hot.
const DEFAULT_RATE_THRESHOLD: f64 = 0.95;
/// Two-capture input: a packet not seen leaving within 250 ms was dropped (a queue that holds
/// packets longer is rare: 250 ms is 3 GB at 100 Gbit/s, 30 MB at 1 Gbit/s).
const DROP_HORIZON_NS: u64 = 250_000_000;
/// Plain captures: TCP marks up to 200 ms (the minimum RTO) after a burst count against it.
const TCP_AFTER_NS: u64 = 200_000_000;

fn unit_err(option: &str, value: &str, expected: &str) -> String {
    format!("--{option} = {value:?}: expected {expected}")
}

fn time_ns(option: &str, value: &Option<String>) -> Result<u64, String> {
    value.as_deref().map_or(Ok(0), |v| {
        parse_time(v)
            .map(|t| t.ps() / 1_000)
            .map_err(|_| unit_err(option, v, r#"a time such as "1ms", "250us", "0s""#))
    })
}

/// A threshold: a size ("200KB") or a percentage of `buffer` ("50%").
fn threshold(option: &str, value: &str, buffer: Option<u64>) -> Result<u64, String> {
    if let Some(pct) = value.trim().strip_suffix('%') {
        let p: f64 = pct
            .trim()
            .parse()
            .map_err(|_| unit_err(option, value, r#"a percentage such as "50%""#))?;
        if !(0.0..=100.0).contains(&p) {
            return Err(unit_err(option, value, "a percentage in 0..100"));
        }
        let b = buffer
            .ok_or_else(|| unit_err(option, value, "a size, or --buffer for a percentage"))?;
        return Ok((b as f64 * p / 100.0).round() as u64);
    }
    parse_size(value).map_err(|_| {
        unit_err(option, value, r#"a size such as "200KB" or "1MiB", or a percentage "50%""#)
    })
}

fn options(raw: &RawOptions) -> Result<DetectOptions, String> {
    let buffer = raw
        .buffer
        .as_deref()
        .map(|b| parse_size(b).map_err(|_| unit_err("buffer", b, r#"a size such as "64MiB""#)))
        .transpose()?;
    // The defaults for what is not given are the telemetry crate's (detect::params).
    let rise = raw.rise.as_deref().map(|r| threshold("rise", r, buffer)).transpose()?;
    let fall = raw.fall.as_deref().map(|f| threshold("fall", f, buffer)).transpose()?;
    let given_time =
        |option, value: &Option<String>| value.as_ref().map(|_| time_ns(option, value)).transpose();
    let hysteresis = HysteresisParams::from_options(
        rise,
        fall,
        buffer,
        given_time("min-duration", &raw.min_duration)?,
        given_time("merge-gap", &raw.merge_gap)?,
    );
    match (hysteresis.rise, hysteresis.fall) {
        (Rise::Bytes(0), _) => {
            let given = raw.rise.as_deref().or(raw.buffer.as_deref()).unwrap_or("0");
            return Err(unit_err("rise", given, "more than 0 bytes"));
        }
        (Rise::Bytes(rise), Fall::Bytes(fall)) if fall > rise => {
            return Err(format!("--fall ({fall} B) must not exceed --rise ({rise} B)"));
        }
        _ => {}
    }
    let rate = match &raw.link_rate {
        None => None,
        Some(r) => {
            let link_bps = parse_rate(r)
                .map_err(|_| unit_err("link-rate", r, r#"a rate such as "10Gbps""#))?
                .bps();
            let threshold = raw.rate_threshold.unwrap_or(DEFAULT_RATE_THRESHOLD);
            let timescales_ns = match &raw.timescales {
                None => default_timescales(link_bps, threshold),
                Some(ts) => ts
                    .iter()
                    .map(|t| match time_ns("timescale", &Some(t.clone()))? {
                        0 => Err(unit_err("timescale", t, "a window longer than 0")),
                        ns => Ok(ns),
                    })
                    .collect::<Result<_, _>>()?,
            };
            Some(
                RateParams { link_bps, threshold, timescales_ns }
                    .check()
                    .map_err(|e| format!("--{e}"))?,
            )
        }
    };
    Ok(DetectOptions {
        hysteresis,
        rate,
        top_k: raw.top.unwrap_or(10),
        ports: raw.ports.clone().unwrap_or_else(|| DEFAULT_REPORT_PORTS.to_vec()),
        drop_horizon_ns: DROP_HORIZON_NS,
        tcp_after_ns: TCP_AFTER_NS,
    })
}

pub(crate) fn parse_options(
    py: Python<'_>,
    options_json: &str,
) -> PyResult<(RawOptions, DetectOptions)> {
    let raw: RawOptions = serde_json::from_str(options_json)
        .map_err(|e| PyRuntimeError::new_err(format!("detect options: {e}")))?;
    let opts = options(&raw).map_err(|m| input_error(py, m))?;
    Ok((raw, opts))
}

fn to_json(py: Python<'_>, d: &Detection) -> PyResult<String> {
    let _ = py;
    serde_json::to_string(d).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Detect bursts in a capture (or a pair: `egress` = the packets leaving the device). Returns
/// the `burstlab detect --json` object as text. Ctrl-C stops the pass (`KeyboardInterrupt`).
#[pyfunction]
#[pyo3(signature = (path, egress, options_json, progress = None))]
pub fn detect_capture(
    py: Python<'_>,
    path: &str,
    egress: Option<&str>,
    options_json: &str,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let (raw, opts) = parse_options(py, options_json)?;
    let total = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
        + egress.and_then(|e| std::fs::metadata(e).ok()).map_or(0, |m| m.len());
    let progress = progress.map(Bound::unbind);
    let mut poll = Poll::new(progress.as_ref(), total);
    let tick = Stoppable(|done| poll.tick(done));
    let result = match egress {
        Some(e) => {
            let (ins, outs) = (open(py, path)?, open(py, e)?);
            py.detach(|| pipeline::detect_capture_pair(ins, outs, path, &opts, tick))
        }
        None => {
            let mut decoder = Decoder::new(profiles(py, raw.profiles_toml.as_deref())?);
            let src = open(py, path)?;
            py.detach(|| pipeline::detect_capture(src, path, &mut decoder, &opts, tick))
        }
    };
    match result {
        Ok(d) => to_json(py, &d),
        Err(e @ (DetectError::Decode { .. } | DetectError::Input(_))) => {
            Err(input_error(py, e.to_string()))
        }
        Err(DetectError::Stopped) => Err(poll.stopped()),
    }
}

fn column<'py, T: numpy::Element>(
    py: Python<'py>,
    columns: &Bound<'py, PyDict>,
    name: &str,
    input: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    let col = columns
        .get_item(name)?
        .ok_or_else(|| input_error(py, format!("{input}: the table has no column {name:?}")))?;
    col.extract()
        .map_err(|_| input_error(py, format!("{input}: column {name:?} has the wrong type")))
}

fn ns(t_s: f64) -> u64 {
    (t_s * 1e9).round().max(0.0) as u64
}

fn flow_of(src: u64, dst: u64, sport: u64, dport: u64, proto: u64) -> FlowKey {
    FlowKey {
        src: IpAddr::V4(Ipv4Addr::from(src as u32)),
        dst: IpAddr::V4(Ipv4Addr::from(dst as u32)),
        sport: sport as u16,
        dport: dport as u16,
        proto: proto as u8,
    }
}

/// One simulator table as typed columns (NumPy: f64 `t_s`, bool `dropped`, u64 the rest).
struct IntColumns<'py> {
    t: PyReadonlyArray1<'py, f64>,
    u: Vec<PyReadonlyArray1<'py, u64>>,
    dropped: PyReadonlyArray1<'py, bool>,
}

const INT_U64: [&str; 12] = [
    "switch_id",
    "ingress_port",
    "egress_port",
    "queue_id",
    "queue_occupancy_bytes",
    "hop_latency_ns",
    "src_ip",
    "dst_ip",
    "src_port",
    "dst_port",
    "protocol",
    "packet_bytes",
];

impl<'py> IntColumns<'py> {
    fn new(py: Python<'py>, columns: &Bound<'py, PyDict>, input: &str) -> PyResult<Self> {
        let mut u = INT_U64
            .iter()
            .map(|n| column::<u64>(py, columns, n, input))
            .collect::<PyResult<Vec<_>>>()?;
        u.push(column::<u64>(py, columns, "report_seq", input)?);
        Ok(IntColumns {
            t: column(py, columns, "t_s", input)?,
            u,
            dropped: column(py, columns, "dropped", input)?,
        })
    }

    fn rows(&self) -> impl Iterator<Item = IntRow> + '_ {
        let t = self.t.as_slice().unwrap_or(&[]);
        let u: Vec<&[u64]> = self.u.iter().map(|c| c.as_slice().unwrap_or(&[])).collect();
        let d = self.dropped.as_slice().unwrap_or(&[]);
        let n = u.iter().map(|c| c.len()).chain([t.len(), d.len()]).min().unwrap_or(0);
        (0..n).map(move |i| IntRow {
            t_ns: ns(t[i]),
            switch_id: u[0][i] as u32,
            ingress_port: u[1][i] as u32,
            egress_port: u[2][i] as u32,
            queue_id: u[3][i] as u8,
            occupancy_bytes: u[4][i],
            hop_latency_ns: u[5][i],
            flow: flow_of(u[6][i], u[7][i], u[8][i], u[9][i], u[10][i]),
            packet_bytes: u[11][i] as u32,
            dropped: d[i],
            seq: u[12][i] as u32,
        })
    }
}

/// Detect bursts in a simulation's `int` table (packets: culprits and victims) or `queue`
/// table (depth only). `columns` maps names to NumPy arrays (`queue`: `node`/`port` as lists
/// of str, and an optional bool `dropped` marking rows that are drops).
#[pyfunction]
pub fn detect_table(
    py: Python<'_>,
    kind: &str,
    columns: Bound<'_, PyDict>,
    options_json: &str,
    input: &str,
) -> PyResult<String> {
    let (_, opts) = parse_options(py, options_json)?;
    let observations: Vec<Observation> = match kind {
        "int" => {
            let cols = IntColumns::new(py, &columns, input)?;
            cols.rows()
                .map(|r| Observation {
                    t_ns: r.t_ns,
                    queue: QueueKey {
                        switch_id: r.switch_id,
                        port: r.egress_port,
                        queue_id: r.queue_id,
                    },
                    occupancy_bytes: r.occupancy_bytes,
                    flow: Some(r.flow),
                    packet_bytes: r.packet_bytes,
                    hop_latency_ns: (!r.dropped).then_some(r.hop_latency_ns),
                    dropped: r.dropped,
                    report: Some((ReportStream { switch_id: r.switch_id, hw_id: 0 }, r.seq)),
                })
                .collect()
        }
        "queue" => {
            let t = column::<f64>(py, &columns, "t_s", input)?;
            let q = column::<u64>(py, &columns, "queue", input)?;
            let occ = column::<u64>(py, &columns, "occupancy_bytes", input)?;
            let node: Vec<String> =
                columns.get_item("node")?.map_or(Ok(Vec::new()), |c| c.extract())?;
            let port: Vec<String> =
                columns.get_item("port")?.map_or(Ok(Vec::new()), |c| c.extract())?;
            // Optional: rows that are drops (`burstlab.telemetry` merges drops.parquet in).
            let dropped = match columns.contains("dropped")? {
                true => Some(column::<bool>(py, &columns, "dropped", input)?),
                false => None,
            };
            let dropped = dropped.as_ref().map(|d| d.as_slice()).transpose()?;
            let (t, q, occ) = (t.as_slice()?, q.as_slice()?, occ.as_slice()?);
            // Depth samples have no numeric ids: number switches and ports in order of appearance.
            let mut ids: Vec<(String, String)> = Vec::new();
            let mut id_of = |n: &str, p: &str| -> (u32, u32) {
                let sw = ids.iter().map(|(a, _)| a).position(|a| a == n);
                let key = ids.iter().position(|(a, b)| a == n && b == p).unwrap_or_else(|| {
                    ids.push((n.to_string(), p.to_string()));
                    ids.len() - 1
                });
                (sw.unwrap_or(key) as u32, key as u32)
            };
            (0..t.len().min(q.len()).min(occ.len()).min(node.len()).min(port.len()))
                .map(|i| {
                    let (switch_id, port) = id_of(&node[i], &port[i]);
                    Observation {
                        t_ns: ns(t[i]),
                        queue: QueueKey { switch_id, port, queue_id: q[i] as u8 },
                        occupancy_bytes: occ[i],
                        flow: None,
                        packet_bytes: 0,
                        hop_latency_ns: None,
                        dropped: dropped.is_some_and(|d| d.get(i).copied().unwrap_or(false)),
                        report: None,
                    }
                })
                .collect()
        }
        other => {
            return Err(PyRuntimeError::new_err(format!(
                "detect_table: unknown table kind {other:?}"
            )));
        }
    };
    let samples = observations.len() as u64;
    let mut poll = Poll::new(None, 0);
    let tick = Stoppable(|done| poll.tick(done));
    let detected =
        py.detach(|| pipeline::detect_observations(observations, &opts, SeqWidth::Bits32, 0, tick));
    let Ok((bursts, lost, _, suspect_occupancy)) = detected else {
        return Err(poll.stopped());
    };
    let d = Detection {
        input: input.to_string(),
        format: if kind == "int" { "simulation-int" } else { "simulation-queue" },
        reports: if kind == "int" { samples } else { 0 },
        reports_lost: lost,
        malformed: 0,
        // Simulated report numbers have no corrupt bits; a --buffer below the simulated
        // queue's makes its deeper samples suspect.
        suspect_sequence: 0,
        suspect_occupancy,
        samples,
        bursts,
        warnings: Vec::new(),
    };
    to_json(py, &d)
}

/// Write a simulation's `int` rows as Telemetry Report packets (`version` "1.0": NoviFlow-style
/// TR v1.0 to UDP 5900; "2.0": TR v2.0 to UDP 1234) into a pcap at `path`; returns the count.
/// The file is written beside `path` and renamed into place, so a failure leaves nothing.
#[pyfunction]
pub fn write_int_pcap(
    py: Python<'_>,
    path: &str,
    columns: Bound<'_, PyDict>,
    version: &str,
) -> PyResult<u64> {
    let format = match version {
        "1.0" => ExportFormat::NoviFlowV1_0,
        "2.0" => ExportFormat::V2_0,
        v => {
            return Err(input_error(
                py,
                format!("--int-version = {v:?}: expected \"1.0\" or \"2.0\""),
            ));
        }
    };
    let cols = IntColumns::new(py, &columns, "int table")?;
    let tmp = format!("{path}.partial");
    let result =
        File::create(&tmp).and_then(|f| write_pcap(cols.rows(), format, BufWriter::new(f)));
    match result.and_then(|n| std::fs::rename(&tmp, path).map(|()| n)) {
        Ok(n) => Ok(n),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(input_error(py, format!("{path}: {e}")))
        }
    }
}
