//! `burstlab replay`: the report datagrams of a capture sent again over UDP, so a collector can be
//! fed by a real capture or a simulated network, and load-tested. The payloads are those
//! `decode` reads (UDP to a report port, found as [`crate::pipeline`] finds them), sent with
//! `sendmmsg(2)` in batches of [`BATCH`], at the capture's own pace (scaled), at a fixed rate,
//! or as fast as the socket takes them.

use super::socket::mmsg_headers;
use crate::capture::CaptureReader;
use crate::error::DecodeError;
use crate::pipeline::{Progress, report_of};
use std::io::{self, Read};
use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Datagrams per `sendmmsg` call.
pub const BATCH: usize = 64;

/// How fast to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// The capture's own spacing divided by this factor (1.0: as captured).
    Capture(f64),
    /// This many datagrams per second, evenly spaced.
    Rate(f64),
    /// As fast as the socket takes them.
    Max,
}

/// Counts of a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    pub frames: u64,
    /// Report datagrams sent.
    pub sent: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Sends refused because nothing listened at the destination (ICMP port unreachable);
    /// the datagram is sent again once.
    pub refused: u64,
}

/// Why a replay did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Not a readable capture, or a record in it that cannot be right.
    #[error("{path}: {error}")]
    Open { path: String, error: io::Error },
    #[error(transparent)]
    Capture(#[from] DecodeError),
    #[error("sending to {to}: {error}")]
    Send { to: SocketAddr, error: io::Error },
    #[error("stopped by the caller")]
    Stopped,
}

/// A UDP sender that keeps its pace across captures (a capture replayed several times).
pub struct Sender {
    sock: UdpSocket,
    to: SocketAddr,
    pace: Pace,
    start: Option<Instant>,
    /// The capture time of the first datagram, and the time offset of each later pass.
    first_ts: Option<u64>,
    offset_ns: u64,
    last_ts: u64,
    buf: Vec<u8>,
    lens: Vec<usize>,
    stats: ReplayStats,
}

impl Sender {
    pub fn new(to: SocketAddr, pace: Pace) -> io::Result<Sender> {
        let local: SocketAddr =
            if to.is_ipv4() { "0.0.0.0:0".parse() } else { "[::]:0".parse() }.expect("literal");
        let sock = UdpSocket::bind(local)?;
        sock.connect(to).map_err(|e| io::Error::new(e.kind(), format!("--to {to}: {e}")))?;
        Ok(Sender {
            sock,
            to,
            pace,
            start: None,
            first_ts: None,
            offset_ns: 0,
            last_ts: 0,
            buf: Vec::with_capacity(BATCH * 1_600),
            lens: Vec::with_capacity(BATCH),
            stats: ReplayStats::default(),
        })
    }

    pub fn stats(&self) -> ReplayStats {
        self.stats
    }

    /// Send the report datagrams of one capture; `progress` ticks after every batch sent (and
    /// during long waits) with the datagrams sent so far, and may stop the pass. A caller's
    /// progress should be cheap: it gates itself on a clock (the bindings take the GIL every
    /// 50 ms).
    pub fn send_capture<R: Read>(
        &mut self,
        src: R,
        ports: &[u16],
        progress: &mut impl Progress,
    ) -> Result<(), ReplayError> {
        let mut reader = CaptureReader::new(src)?;
        // A later pass of the same capture continues the timeline after the last datagram.
        self.offset_ns = self.last_ts;
        let mut pass_first: Option<u64> = None;
        while let Some(frame) = reader.next() {
            let frame = frame?;
            self.stats.frames += 1;
            let Some((payload, _)) = report_of(&frame, ports, false).0 else { continue };
            let ts = frame.ts_ns.saturating_sub(*pass_first.get_or_insert(frame.ts_ns));
            let ts = ts + self.offset_ns;
            self.last_ts = ts;
            if let Some(due) = self.due(ts)
                && due > Instant::now()
            {
                self.send_batch(progress)?;
                self.wait_until(due, progress)?;
            }
            self.lens.push(payload.len());
            self.buf.extend_from_slice(payload);
            if self.lens.len() == BATCH {
                self.send_batch(progress)?;
            }
        }
        self.send_batch(progress)?;
        Ok(())
    }

    /// Send what is batched, then tick: `progress` sees the exact count sent so far.
    fn send_batch(&mut self, progress: &mut impl Progress) -> Result<(), ReplayError> {
        self.flush().map_err(|error| ReplayError::Send { to: self.to, error })?;
        match progress.tick(self.stats.sent) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(ReplayError::Stopped),
        }
    }

    /// Sleep until `due` in slices short enough for `progress` to stop a long wait.
    fn wait_until(
        &mut self,
        due: Instant,
        progress: &mut impl Progress,
    ) -> Result<(), ReplayError> {
        const SLICE: Duration = Duration::from_millis(20);
        loop {
            let left = due.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(SLICE));
            if left > SLICE && progress.tick(self.stats.sent) == ControlFlow::Break(()) {
                return Err(ReplayError::Stopped);
            }
        }
    }

    /// When the datagram at capture time `ts` (from the first) is due; `None`: now.
    fn due(&mut self, ts: u64) -> Option<Instant> {
        let start = *self.start.get_or_insert_with(Instant::now);
        self.first_ts.get_or_insert(ts);
        match self.pace {
            Pace::Max => None,
            Pace::Capture(speed) => Some(start + Duration::from_secs_f64(ts as f64 / 1e9 / speed)),
            Pace::Rate(pps) => {
                let k = self.stats.sent + self.lens.len() as u64;
                Some(start + Duration::from_secs_f64(k as f64 / pps))
            }
        }
    }

    /// Send what is batched.
    fn flush(&mut self) -> io::Result<()> {
        let mut done = 0;
        let mut refused_once = false;
        while done < self.lens.len() {
            let mut at = self.lens[..done].iter().sum::<usize>();
            let mut iovs: Vec<libc::iovec> = self.lens[done..]
                .iter()
                .map(|&len| {
                    // SAFETY: `at..at + len` lies inside `buf` (the lengths sum to its size).
                    let base = unsafe { self.buf.as_mut_ptr().add(at) };
                    at += len;
                    libc::iovec { iov_base: base.cast(), iov_len: len }
                })
                .collect();
            let mut msgs = mmsg_headers(&mut iovs);
            // SAFETY: `msgs` and the iovecs they point to live for the call.
            let n = unsafe {
                libc::sendmmsg(
                    self.sock.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    msgs.len() as libc::c_uint,
                    0,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::ConnectionRefused if !refused_once => {
                        // The error of an earlier datagram, reported now: nothing was sent.
                        self.stats.refused += 1;
                        refused_once = true;
                        continue;
                    }
                    io::ErrorKind::ConnectionRefused => {
                        // Nobody listens: these datagrams go nowhere, as they would on a wire.
                        self.stats.refused += 1;
                        done += 1;
                        continue;
                    }
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
                    _ if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        std::thread::yield_now();
                        continue;
                    }
                    _ => return Err(e),
                }
            }
            let n = n as usize;
            self.stats.sent += n as u64;
            self.stats.bytes += self.lens[done..done + n].iter().sum::<usize>() as u64;
            done += n;
        }
        self.lens.clear();
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::socket::Receiver;
    use crate::export::{ExportFormat, IntRow, write_int_pcap};
    use crate::model::FlowKey;
    use crate::profile::DEFAULT_REPORT_PORTS;
    use std::net::{IpAddr, Ipv4Addr};

    fn capture(n: u32, spacing_ns: u64) -> Vec<u8> {
        let rows = (0..n).map(|k| IntRow {
            t_ns: 1_000_000 + u64::from(k) * spacing_ns,
            switch_id: 1,
            ingress_port: 1,
            egress_port: 2,
            queue_id: 0,
            occupancy_bytes: u64::from(k),
            hop_latency_ns: 100,
            flow: FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
                sport: 1,
                dport: 2,
                proto: 17,
            },
            packet_bytes: 100,
            dropped: false,
            seq: k,
        });
        let mut file = Vec::new();
        write_int_pcap(rows, ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        file
    }

    #[test]
    fn every_report_datagram_arrives_as_captured() {
        let mut rx = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
        let to = rx.local_addrs()[0];
        let file = capture(1_000, 1_000);
        let mut tx = Sender::new(to, Pace::Max).unwrap();
        tx.send_capture(&file[..], &DEFAULT_REPORT_PORTS, &mut |_| {}).unwrap();
        assert_eq!((tx.stats().frames, tx.stats().sent), (1_000, 1_000));
        let mut got = 0u64;
        let mut bytes = 0u64;
        while got < 1_000 {
            got += rx.recv(1_000, 10_000, |p, _, _, _| bytes += p.len() as u64).unwrap() as u64;
        }
        assert_eq!(bytes, tx.stats().bytes);
    }

    #[test]
    fn rate_and_capture_pace_take_the_time_they_say() {
        let rx = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
        let to = rx.local_addrs()[0];
        let file = capture(201, 1_000_000); // 200 ms of capture
        let t0 = Instant::now();
        Sender::new(to, Pace::Capture(2.0))
            .unwrap()
            .send_capture(&file[..], &[5900], &mut |_| {})
            .unwrap();
        let half = t0.elapsed();
        assert!(
            half >= Duration::from_millis(100) && half < Duration::from_millis(400),
            "{half:?}"
        );
        let t0 = Instant::now();
        Sender::new(to, Pace::Rate(2_000.0))
            .unwrap()
            .send_capture(&file[..], &[5900], &mut |_| {})
            .unwrap();
        let rate = t0.elapsed();
        assert!(
            rate >= Duration::from_millis(100) && rate < Duration::from_millis(400),
            "{rate:?}"
        );
    }

    #[test]
    fn nobody_listening_is_counted_not_fatal() {
        let to = {
            let r = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
            r.local_addrs()[0]
        };
        let file = capture(500, 1_000);
        let mut tx = Sender::new(to, Pace::Max).unwrap();
        tx.send_capture(&file[..], &[5900], &mut |_| {}).unwrap();
        assert_eq!(tx.stats().frames, 500);
        assert!(tx.stats().refused > 0);
    }
}
