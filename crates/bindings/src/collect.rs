//! `burstlab collect` and `burstlab replay` behind `burstlab.collect`: the receive, decode and
//! detect loop runs in `burstlab_telemetry::collect` with the GIL released, and hands Python one
//! batch of columns at a time (NumPy arrays that take the Rust vectors, a flow dictionary, the
//! bursts that ended as JSON), never a report at a time. Both re-attach every
//! [`crate::reattach::POLL_EVERY`] so Ctrl-C stops them within a fraction of a second.

use std::fs::File;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use numpy::PyArray1;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use burstlab_telemetry::collect::{
    Batch, CollectOptions, Collector, Pace, Receiver, ReplayError, Sender, VERSION_NAMES,
};
use burstlab_telemetry::decode::Decoder;
use burstlab_telemetry::pipeline::Stoppable;
use burstlab_telemetry::profile::DEFAULT_REPORT_PORTS;

use crate::reattach::Reattach;
use crate::telemetry::{input_error, parse_options, profiles};

fn addr(py: Python<'_>, option: &str, text: &str) -> PyResult<SocketAddr> {
    let bad = |why: String| {
        input_error(
            py,
            format!("{option} = {text:?}: expected ADDR:PORT, e.g. 127.0.0.1:5900 ({why})"),
        )
    };
    text.to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("no address".into()))
}

/// The live collector: its sockets and its pipeline.
#[pyclass(module = "burstlab._core", name = "Collector")]
pub struct PyCollector {
    receiver: Receiver,
    collector: Collector,
}

#[pymethods]
impl PyCollector {
    /// Bind every `listen` address. `options_json` are `detect`'s options (rise, fall, buffer,
    /// min_duration, merge_gap, top, profiles_toml) plus `max_queues`, `max_flows` and `report_sample`,
    /// with `detect`'s defaults (see `burstlab_telemetry::collect::engine`).
    #[new]
    fn new(py: Python<'_>, listen: Vec<String>, options_json: &str) -> PyResult<Self> {
        let mut value: serde_json::Value = serde_json::from_str(options_json)
            .map_err(|e| PyRuntimeError::new_err(format!("collect options: {e}")))?;
        let take = |v: &mut serde_json::Value, k: &str| v.as_object_mut().and_then(|o| o.remove(k));
        let max_queues = take(&mut value, "max_queues").and_then(|v| v.as_u64()).unwrap_or(65_536);
        let report_sample = take(&mut value, "report_sample").and_then(|v| v.as_u64()).unwrap_or(1);
        let max_flows = take(&mut value, "max_flows").and_then(|v| v.as_u64()).unwrap_or(1_000_000);
        let (raw, opts) = parse_options(py, &value.to_string())?;
        let decoder = Decoder::new(profiles(py, raw.profiles_toml.as_deref())?);
        let addrs = listen.iter().map(|a| addr(py, "--listen", a)).collect::<PyResult<Vec<_>>>()?;
        let receiver = Receiver::bind(&addrs).map_err(|e| input_error(py, e.to_string()))?;
        let options = CollectOptions {
            hysteresis: opts.hysteresis,
            top_k: opts.top_k,
            max_queues: usize::try_from(max_queues).unwrap_or(usize::MAX).max(1),
            max_flows: usize::try_from(max_flows).unwrap_or(usize::MAX),
            report_sample: u32::try_from(report_sample).unwrap_or(u32::MAX),
        };
        Ok(PyCollector { receiver, collector: Collector::new(decoder, options) })
    }

    /// The addresses bound, as "ADDR:PORT".
    fn addresses(&self) -> Vec<String> {
        self.receiver.local_addrs().iter().map(ToString::to_string).collect()
    }

    /// Receive for up to `max_wait_s` (0: what is queued now, without waiting), or until
    /// `max_rows` rows wait, then return the batch:
    /// `{"reports": {col: array}, "queue": {col: array}, "flows": [str], "versions": [str],
    /// "bursts": [json], "counters": {...}, "received": datagrams received in this call}`. Ctrl-C raises `KeyboardInterrupt`; the rows
    /// received before it stay for [`PyCollector::finish`].
    fn poll<'py>(
        &mut self,
        py: Python<'py>,
        max_wait_s: f64,
        max_rows: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let deadline = Instant::now() + Duration::from_secs_f64(max_wait_s.max(0.0));
        let (receiver, collector) = (&mut self.receiver, &mut self.collector);
        let mut reattach = Reattach::new();
        let mut received = 0usize;
        let result = py.detach(|| {
            // Once at least, without waiting when `max_wait_s` is 0: a final drain.
            loop {
                let wait = deadline.saturating_duration_since(Instant::now());
                let wait = wait.min(Duration::from_millis(20));
                let room = max_rows.saturating_sub(collector.pending_rows());
                let got = receiver.recv(wait.as_millis() as i32, room, |p, port, t, cut| {
                    if cut {
                        collector.truncated(p.len());
                    } else {
                        collector.ingest(p, port, t);
                    }
                })?;
                received += got;
                let full = collector.pending_rows() >= max_rows;
                if full || Instant::now() >= deadline || (got == 0 && wait.is_zero()) {
                    return Ok(());
                }
                if reattach.every(|_| Ok(())) == ControlFlow::Break(()) {
                    return Ok(());
                }
            }
        });
        result.map_err(|e: std::io::Error| {
            PyRuntimeError::new_err(format!("collect: receiving: {e}"))
        })?;
        if reattach.failed() {
            return Err(reattach.stopped("collect"));
        }
        let batch = self.collector.take_batch();
        let out = self.batch(py, batch)?;
        out.set_item("received", received)?;
        Ok(out)
    }

    /// Close the bursts still open (as `detect` does at the end of a capture) and return the
    /// last batch, in [`PyCollector::poll`]'s shape.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let batch = self.collector.finish();
        self.batch(py, batch)
    }

    /// Every tracked queue's occupancy: `(switch_id, port, queue_id, last_bytes, max_bytes)`
    /// arrays, `max_bytes` the deepest since the last call.
    #[allow(clippy::type_complexity)]
    fn gauges<'py>(
        &mut self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u8>>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyArray1<u64>>,
    ) {
        let g = self.collector.take_gauges();
        (
            PyArray1::from_iter(py, g.iter().map(|g| g.queue.switch_id)),
            PyArray1::from_iter(py, g.iter().map(|g| g.queue.port)),
            PyArray1::from_iter(py, g.iter().map(|g| g.queue.queue_id)),
            PyArray1::from_iter(py, g.iter().map(|g| g.last_bytes)),
            PyArray1::from_iter(py, g.iter().map(|g| g.max_bytes)),
        )
    }

    /// Per report stream: `[(switch_id, hw_id, received, lost)]`.
    fn losses(&self) -> Vec<(u32, u8, u64, u64)> {
        self.collector
            .losses()
            .iter()
            .map(|l| (l.stream.switch_id, l.stream.hw_id, l.received, l.lost))
            .collect()
    }
}

impl PyCollector {
    fn batch<'py>(&self, py: Python<'py>, b: Batch) -> PyResult<Bound<'py, PyDict>> {
        let reports = PyDict::new(py);
        reports.set_item("recv_ns", PyArray1::from_vec(py, b.r_recv_ns))?;
        reports.set_item("switch_id", PyArray1::from_vec(py, b.r_switch_id))?;
        reports.set_item("hw_id", PyArray1::from_vec(py, b.r_hw_id))?;
        reports.set_item("seq", PyArray1::from_vec(py, b.r_seq))?;
        reports.set_item("version", PyArray1::from_vec(py, b.r_version))?;
        reports.set_item("dropped", PyArray1::from_vec(py, b.r_dropped))?;
        reports.set_item("congested", PyArray1::from_vec(py, b.r_congested))?;
        reports.set_item("tracked", PyArray1::from_vec(py, b.r_tracked))?;
        reports.set_item("drop_reason", PyArray1::from_vec(py, b.r_drop_reason))?;
        reports.set_item("flow", PyArray1::from_vec(py, b.r_flow))?;
        reports.set_item("packet_bytes", PyArray1::from_vec(py, b.r_packet_bytes))?;
        reports.set_item("hops", PyArray1::from_vec(py, b.r_hops))?;
        let queue = PyDict::new(py);
        queue.set_item("t_ns", PyArray1::from_vec(py, b.q_t_ns))?;
        queue.set_item("recv_ns", PyArray1::from_vec(py, b.q_recv_ns))?;
        queue.set_item("switch_id", PyArray1::from_vec(py, b.q_switch_id))?;
        queue.set_item("port", PyArray1::from_vec(py, b.q_port))?;
        queue.set_item("queue_id", PyArray1::from_vec(py, b.q_queue_id))?;
        queue.set_item("occupancy_bytes", PyArray1::from_vec(py, b.q_occupancy_bytes))?;
        queue.set_item("hop_latency_ns", PyArray1::from_vec(py, b.q_hop_latency_ns))?;
        queue.set_item("flow", PyArray1::from_vec(py, b.q_flow))?;
        queue.set_item("packet_bytes", PyArray1::from_vec(py, b.q_packet_bytes))?;
        queue.set_item("dropped", PyArray1::from_vec(py, b.q_dropped))?;
        let bursts = b
            .bursts
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let n = self.collector.counters();
        let counters = PyDict::new(py);
        for (k, v) in [
            ("datagrams", n.datagrams),
            ("bytes", n.bytes),
            ("reports", n.reports),
            ("malformed", n.malformed),
            ("truncated", n.truncated),
            ("overflow", n.overflow),
            ("flow_overflow", n.flow_overflow),
            ("flows", n.flows),
            ("without_occupancy", n.without_occupancy),
            ("samples", n.samples),
            ("bursts", n.bursts),
            ("settled", n.settled),
            ("reports_lost", self.collector.lost()),
            ("kernel_drops", self.receiver.kernel_drops()),
            ("buffers", self.receiver.buffers()),
        ] {
            counters.set_item(k, v)?;
        }
        let out = PyDict::new(py);
        out.set_item("reports", reports)?;
        out.set_item("queue", queue)?;
        out.set_item("flows", PyList::new(py, b.flows.dict)?)?;
        out.set_item("versions", PyList::new(py, VERSION_NAMES)?)?;
        out.set_item("bursts", PyList::new(py, bursts)?)?;
        out.set_item("counters", counters)?;
        Ok(out)
    }
}

/// Send the report datagrams of the capture at `path` to `to`, `repeat` times over. `pace` is
/// "max", "capture" (the capture's spacing divided by `value`) or "rate" (`value` datagrams per
/// second). `progress(sent)` is called every [`crate::reattach::POLL_EVERY`]; an exception it
/// raises, or Ctrl-C, stops the replay and propagates. Returns `{"frames", "sent", "bytes",
/// "messages", "refused", "seconds"}`.
#[pyfunction]
#[pyo3(signature = (path, to, pace, value, ports = None, repeat = 1, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn replay<'py>(
    py: Python<'py>,
    path: &str,
    to: &str,
    pace: &str,
    value: f64,
    ports: Option<Vec<u16>>,
    repeat: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let pace = match pace {
        "max" => Pace::Max,
        "capture" if value > 0.0 && value.is_finite() => Pace::Capture(value),
        "rate" if value > 0.0 && value.is_finite() => Pace::Rate(value),
        other => {
            return Err(input_error(
                py,
                format!(
                    "replay pace {other:?} with {value}: expected max, capture or rate with a value > 0"
                ),
            ));
        }
    };
    let to = addr(py, "--to", to)?;
    let ports = ports.unwrap_or_else(|| DEFAULT_REPORT_PORTS.to_vec());
    let mut sender = Sender::new(to, pace).map_err(|e| input_error(py, e.to_string()))?;
    let mut reattach = Reattach::new();
    let start = Instant::now();
    let result = py.detach(|| {
        let mut tick = Stoppable(|sent| {
            reattach
                .every(|py| progress.as_ref().map_or(Ok(()), |p| p.call1(py, (sent,)).map(drop)))
        });
        for _ in 0..repeat.max(1) {
            let src =
                File::open(path).map_err(|error| ReplayError::Open { path: path.into(), error })?;
            sender.send_capture(src, &ports, &mut tick)?;
        }
        Ok::<(), ReplayError>(())
    });
    match result {
        Ok(()) => {}
        Err(ReplayError::Stopped) => return Err(reattach.stopped("replay")),
        Err(e @ ReplayError::Open { .. }) => return Err(input_error(py, e.to_string())),
        Err(e @ ReplayError::Capture(_)) => return Err(input_error(py, format!("{path}: {e}"))),
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    }
    let s = sender.stats();
    let out = PyDict::new(py);
    out.set_item("frames", s.frames)?;
    out.set_item("sent", s.sent)?;
    out.set_item("bytes", s.bytes)?;
    out.set_item("messages", s.messages)?;
    out.set_item("refused", s.refused)?;
    out.set_item("seconds", start.elapsed().as_secs_f64())?;
    Ok(out)
}
