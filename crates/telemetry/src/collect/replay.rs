//! `burstlab replay`: the report datagrams of a capture sent again over UDP, so a collector can be
//! fed by a real capture or a simulated network, and load-tested. The payloads are those
//! `decode` reads (UDP to a report port, found as [`crate::pipeline`] finds them), sent with
//! `sendmmsg(2)` in batches of up to [`BATCH`], at the capture's own pace (scaled), at a fixed
//! rate, or as fast as the socket takes them. Runs of equal-size datagrams go as one message with
//! `UDP_SEGMENT` (UDP GSO, Linux 4.18): the kernel cuts it into the same datagrams on the wire,
//! at the cost of one pass through its send path; a collector that asks for UDP GRO gets such a
//! run whole again ([`super::socket`]).

use super::socket::{UDP_SEGMENT, mmsg_headers, set_int_option};
use crate::capture::CaptureReader;
use crate::error::DecodeError;
use crate::pipeline::{Progress, report_of};
use std::io::{self, Read};
use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Most datagrams per `sendmmsg` call.
pub const BATCH: usize = 1_024;

/// Most datagrams in one `UDP_SEGMENT` message: `UDP_MAX_SEGMENTS` (include/linux/udp.h), 64
/// until Linux 6.2 raised it to 128.
const GSO_MAX_SEGMENTS: usize = 64;

/// Most payload bytes in one: an IPv4 packet's 65,535 bytes less its IP and UDP headers
/// (`udp_send_skb` refuses more, net/ipv4/udp.c).
const GSO_MAX_BYTES: usize = 65_535 - 20 - 8;

/// Control-message room per message: one `cmsghdr` with a `u16` (the segment size), aligned.
const CONTROL_BYTES: usize = 32;

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
    /// Messages they went in: a datagram each, or a run of them sent with `UDP_SEGMENT`. On
    /// loopback to a socket with UDP GRO each arrives as one buffer (or is dropped as one).
    pub messages: u64,
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
    /// Whether runs of equal-size datagrams go as `UDP_SEGMENT` messages: the kernel has it,
    /// and no such send has failed.
    gso: bool,
    /// Control-message room, [`CONTROL_BYTES`] per message; `u64`s for `cmsghdr`'s alignment.
    control: Vec<u64>,
    stats: ReplayStats,
}

impl Sender {
    pub fn new(to: SocketAddr, pace: Pace) -> io::Result<Sender> {
        let local: SocketAddr =
            if to.is_ipv4() { "0.0.0.0:0".parse() } else { "[::]:0".parse() }.expect("literal");
        let sock = UdpSocket::bind(local)?;
        sock.connect(to).map_err(|e| io::Error::new(e.kind(), format!("--to {to}: {e}")))?;
        // Setting the option (to 0: no segmenting unless a message asks) is how to learn whether
        // the kernel knows it; an older one would ignore the control message and send a run as
        // one long datagram.
        let gso = set_int_option(&sock, libc::SOL_UDP, UDP_SEGMENT, 0).is_ok();
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
            gso,
            control: vec![0; BATCH * CONTROL_BYTES / 8],
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

    /// Whether runs of equal-size datagrams go as one `UDP_SEGMENT` message.
    pub fn segments(&self) -> bool {
        self.gso
    }

    /// Send what is batched: each message a run of equal-size datagrams (one datagram each
    /// without GSO). A run the kernel refuses to segment is sent again datagram by datagram,
    /// and so is every later one.
    fn flush(&mut self) -> io::Result<()> {
        let mut done = 0; // datagrams
        let mut refused_once = false;
        while done < self.lens.len() {
            let runs = runs(&self.lens[done..], self.gso);
            let mut at = self.lens[..done].iter().sum::<usize>();
            let mut iovs: Vec<libc::iovec> = runs
                .iter()
                .map(|&(len, n)| {
                    // SAFETY: `at..at + len * n` lies inside `buf` (the lengths sum to its size).
                    let base = unsafe { self.buf.as_mut_ptr().add(at) };
                    at += len * n;
                    libc::iovec { iov_base: base.cast(), iov_len: len * n }
                })
                .collect();
            let mut msgs = mmsg_headers(&mut iovs);
            for (k, (m, &(len, n))) in msgs.iter_mut().zip(&runs).enumerate() {
                if n > 1 {
                    // SAFETY: k < BATCH, so the CONTROL_BYTES from here lie inside `control`.
                    let ctl = unsafe { self.control.as_mut_ptr().add(k * CONTROL_BYTES / 8) };
                    segment_size_message(&mut m.msg_hdr, ctl.cast(), len as u16);
                }
            }
            // SAFETY: `msgs`, the iovecs and the control data they point to live for the call.
            let sent = unsafe {
                libc::sendmmsg(
                    self.sock.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    msgs.len() as libc::c_uint,
                    0,
                )
            };
            if sent < 0 {
                let e = io::Error::last_os_error();
                let (_, first) = runs[0];
                match e.kind() {
                    io::ErrorKind::ConnectionRefused if !refused_once => {
                        // The error of an earlier datagram, reported now: nothing was sent.
                        self.stats.refused += 1;
                        refused_once = true;
                        continue;
                    }
                    io::ErrorKind::ConnectionRefused => {
                        // Nobody listens: these datagrams go nowhere, as they would on a wire.
                        self.stats.refused += first as u64;
                        done += first;
                        continue;
                    }
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
                    _ if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        std::thread::yield_now();
                        continue;
                    }
                    // The route's device cannot segment (EIO: no checksum offload) or the
                    // run does not fit its MTU (EINVAL): one datagram at a time from here.
                    _ if first > 1
                        && matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) =>
                    {
                        self.gso = false;
                        continue;
                    }
                    _ => return Err(e),
                }
            }
            self.stats.messages += sent as u64;
            for &(len, n) in &runs[..sent as usize] {
                self.stats.sent += n as u64;
                self.stats.bytes += (len * n) as u64;
                done += n;
            }
        }
        self.lens.clear();
        self.buf.clear();
        Ok(())
    }
}

/// The messages of a batch as (datagram length, datagrams): runs of equal lengths within
/// `UDP_SEGMENT`'s limits when `gso`, else one datagram each.
fn runs(lens: &[usize], gso: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < lens.len() {
        let len = lens[k];
        let most = if gso && len > 0 { GSO_MAX_SEGMENTS.min(GSO_MAX_BYTES / len) } else { 1 };
        let n = lens[k..].iter().take(most.max(1)).take_while(|&&l| l == len).count();
        out.push((len, n));
        k += n;
    }
    out
}

/// Attach to `hdr` a `UDP_SEGMENT` control message of `size`, written at `ctl`
/// ([`CONTROL_BYTES`] of room, aligned for `cmsghdr`).
fn segment_size_message(hdr: &mut libc::msghdr, ctl: *mut u8, size: u16) {
    // SAFETY: `ctl` has CONTROL_BYTES >= CMSG_SPACE(2) bytes, aligned; CMSG_FIRSTHDR of a header
    // whose control length covers it points at `ctl`.
    unsafe {
        hdr.msg_control = ctl.cast();
        hdr.msg_controllen = libc::CMSG_SPACE(2) as _;
        let c = libc::CMSG_FIRSTHDR(hdr);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(2) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::socket::Receiver;
    use crate::export::{ExportFormat, IntRow, ramp_row, write_int_pcap};
    use crate::profile::DEFAULT_REPORT_PORTS;

    fn capture(n: u32, spacing_ns: u64) -> Vec<u8> {
        let rows = (0..n)
            .map(|k| IntRow { t_ns: 1_000_000 + u64::from(k) * spacing_ns, ..ramp_row(k, 1, 1) });
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
        // The refusal of one `sendmmsg` is reported by the next: more than one batch.
        let file = capture(3 * BATCH as u32, 1_000);
        let mut tx = Sender::new(to, Pace::Max).unwrap();
        tx.send_capture(&file[..], &[5900], &mut |_| {}).unwrap();
        assert_eq!(tx.stats().frames, 3 * BATCH as u64);
        assert!(tx.stats().refused > 0);
    }

    /// Datagrams of these lengths, each filled with its own index, through `flush`.
    fn send_lengths(tx: &mut Sender, lens: &[usize]) {
        for (k, &len) in lens.iter().enumerate() {
            tx.lens.push(len);
            tx.buf.extend(std::iter::repeat_n(k as u8, len));
        }
        tx.flush().unwrap();
    }

    #[test]
    fn runs_of_equal_lengths_are_segmented_within_the_kernels_limits() {
        assert_eq!(runs(&[100; 150], true), [(100, 64), (100, 64), (100, 22)]);
        assert_eq!(runs(&[100, 100, 60, 100], true), [(100, 2), (60, 1), (100, 1)]);
        // 65,507 / 9,000: 7 jumbo datagrams fit in one message.
        assert_eq!(runs(&[9_000; 10], true), [(9_000, 7), (9_000, 3)]);
        assert_eq!(runs(&[100; 3], false), [(100, 1); 3]);
        assert_eq!(runs(&[0, 0], true), [(0, 1), (0, 1)]);
    }

    #[test]
    fn segmented_runs_arrive_as_the_same_datagrams_in_order() {
        let mut rx = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
        let mut tx = Sender::new(rx.local_addrs()[0], Pace::Max).unwrap();
        let mut lens = vec![120; 200];
        lens.extend([37, 120, 120, 9_000, 9_000, 9_000, 1]);
        lens.extend([80; 70]);
        send_lengths(&mut tx, &lens);
        assert_eq!((tx.stats().sent, tx.stats().refused), (lens.len() as u64, 0));
        // 200 x 120 in 4 runs (64, 64, 64, 8), 37, 120 x 2, 9,000 x 3, 1, 80 x 70 in 2.
        assert_eq!(tx.stats().messages, 4 + 1 + 1 + 1 + 1 + 2);
        let mut got = Vec::new();
        while got.len() < lens.len() {
            rx.recv(1_000, 10_000, |p, _, _, cut| {
                assert!(!cut);
                got.push(p.to_vec());
            })
            .unwrap();
        }
        for (k, (p, &len)) in got.iter().zip(&lens).enumerate() {
            assert_eq!(p.len(), len, "datagram {k}");
            assert!(p.iter().all(|&b| b == k as u8), "datagram {k}");
        }
        // This kernel segments, and the receiver's GRO hands each run over whole.
        assert!(tx.segments());
        assert_eq!((rx.buffers(), rx.kernel_drops()), (tx.stats().messages, 0));
        assert_eq!(rx.coalesced(), 4 + 1 + 1 + 2);
    }
}
