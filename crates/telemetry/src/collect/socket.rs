//! UDP in batches: `recvmmsg(2)` takes up to [`BATCH`] buffers per system call from each
//! listening socket, so a collector pays one call per batch, not per report (the way AmLight's
//! XDP collector and Linux's own `udpgro` tests read at line rate). Each socket asks for UDP GRO
//! (`UDP_GRO`): the kernel then hands over runs of same-flow datagrams as one buffer with their
//! segment size in a control message, which is split here, so a run costs the kernel's
//! per-datagram path once. On loopback it coalesces what a sender sent with `UDP_SEGMENT`
//! (`burstlab replay` does); from a NIC the kernel's GRO engine coalesces same-flow datagrams
//! for a socket that asks. What the kernel drops because the socket's buffer was full is read
//! apart, from `SO_MEMINFO`.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{SystemTime, UNIX_EPOCH};

/// Buffers per `recvmmsg` call (each up to [`SLOT_BYTES`], a coalesced run or one datagram).
pub const BATCH: usize = 64;

/// Bytes kept per datagram: a jumbo frame's payload. A longer datagram (not a coalesced run) is
/// counted as cut, not decoded, as a receive buffer of this size would cut it.
pub const DATAGRAM_BYTES: usize = 9_216;

/// Room per buffer: the longest coalesced run the kernel hands over (an IP packet's 64 KiB).
pub const SLOT_BYTES: usize = 65_536;

/// Receive buffer asked for per socket (the kernel caps it at `net.core.rmem_max` unless the
/// process may force it): 64 MiB holds about 300 ms of reports at 1 M reports/s.
pub const RCVBUF_BYTES: usize = 64 << 20;

/// `SO_MEMINFO` (include/uapi/asm-generic/socket.h) and the index of the drop counter in what
/// it returns, `SK_MEMINFO_DROPS` (include/uapi/linux/sock_diag.h).
const SO_MEMINFO: libc::c_int = 55;
const SK_MEMINFO_DROPS: usize = 8;
const SK_MEMINFO_VARS: usize = 9;

/// `UDP_SEGMENT` and `UDP_GRO`, socket options and control-message types at level `SOL_UDP`
/// (include/uapi/linux/udp.h; the libc crate has them only for some targets).
pub(super) const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Control-message room per buffer: one `cmsghdr` with an `int` (the GRO segment size), aligned.
const CONTROL_BYTES: usize = 32;

/// The listening sockets and the buffers `recvmmsg` fills.
pub struct Receiver {
    sockets: Vec<(UdpSocket, u16)>,
    bufs: Vec<u8>,
    /// Per buffer: its length, whether the kernel cut it, and its GRO segment size (0: one
    /// datagram).
    lens: Vec<(usize, bool, usize)>,
    /// Control-message room, [`CONTROL_BYTES`] per buffer; `u64`s for `cmsghdr`'s alignment.
    control: Vec<u64>,
    /// Buffers received (each a datagram or a coalesced run), and those that held a coalesced
    /// run of more than one datagram.
    buffers: u64,
    coalesced: u64,
}

impl Receiver {
    /// Bind each address (non-blocking, with a large receive buffer and UDP GRO where the
    /// kernel has it).
    pub fn bind(addrs: &[SocketAddr]) -> io::Result<Receiver> {
        let mut sockets = Vec::new();
        for addr in addrs {
            let s = UdpSocket::bind(addr)
                .map_err(|e| io::Error::new(e.kind(), format!("--listen {addr}: {e}")))?;
            s.set_nonblocking(true)?;
            grow_rcvbuf(&s);
            // Without it (kernels before 5.0) each datagram comes on its own, as before.
            let _ = set_int_option(&s, libc::SOL_UDP, UDP_GRO, 1);
            let port = s.local_addr()?.port();
            sockets.push((s, port));
        }
        Ok(Receiver {
            sockets,
            bufs: vec![0; BATCH * SLOT_BYTES],
            lens: vec![(0, false, 0); BATCH],
            control: vec![0; BATCH * CONTROL_BYTES / 8],
            buffers: 0,
            coalesced: 0,
        })
    }

    /// The bound addresses (port 0 asked: the one the kernel chose).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets.iter().filter_map(|(s, _)| s.local_addr().ok()).collect()
    }

    /// Wait up to `timeout_ms` for datagrams, then take what is queued, until at least `max`
    /// datagrams are taken (a coalesced run is taken whole, so a few more may come);
    /// `each(payload, port, recv_ns, truncated)` gets each datagram, a coalesced run split
    /// into its datagrams. Returns how many datagrams were taken.
    pub fn recv(
        &mut self,
        timeout_ms: i32,
        max: usize,
        mut each: impl FnMut(&[u8], u16, u64, bool),
    ) -> io::Result<usize> {
        let mut fds: Vec<libc::pollfd> = self
            .sockets
            .iter()
            .map(|(s, _)| libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the whole call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(0) } else { Err(e) };
        }
        let mut taken = 0;
        for (i, fd) in fds.iter().enumerate() {
            if fd.revents & libc::POLLIN == 0 {
                continue;
            }
            let port = self.sockets[i].1;
            while taken < max {
                let n = self.recv_batch(fd.fd, (max - taken).min(BATCH))?;
                if n == 0 {
                    break;
                }
                let recv_ns = now_ns();
                for k in 0..n {
                    let (len, cut, seg) = self.lens[k];
                    let buf = &self.bufs[k * SLOT_BYTES..k * SLOT_BYTES + len.min(SLOT_BYTES)];
                    let datagrams = split_run(buf, cut, seg, |p, cut| each(p, port, recv_ns, cut));
                    self.buffers += 1;
                    self.coalesced += u64::from(datagrams > 1);
                    taken += datagrams;
                }
                if n < BATCH {
                    break;
                }
            }
        }
        Ok(taken)
    }

    /// One `recvmmsg` of up to `n` buffers without waiting; their lengths and segment sizes go
    /// to `self.lens`.
    fn recv_batch(&mut self, fd: libc::c_int, n: usize) -> io::Result<usize> {
        let mut iovs: Vec<libc::iovec> = (0..n)
            .map(|k| libc::iovec {
                // SAFETY: k < BATCH, so the slot lies inside `bufs`.
                iov_base: unsafe { self.bufs.as_mut_ptr().add(k * SLOT_BYTES) }.cast(),
                iov_len: SLOT_BYTES,
            })
            .collect();
        let mut msgs = mmsg_headers(&mut iovs);
        for (k, m) in msgs.iter_mut().enumerate() {
            // SAFETY: k < BATCH, so the CONTROL_BYTES from here lie inside `control`.
            m.msg_hdr.msg_control =
                unsafe { self.control.as_mut_ptr().add(k * CONTROL_BYTES / 8) }.cast();
            m.msg_hdr.msg_controllen = CONTROL_BYTES as _;
        }
        // SAFETY: `msgs` points at `n` headers whose iovecs point into `bufs` and whose control
        // buffers point into `control`, all alive for the call; MSG_DONTWAIT makes it return at
        // once.
        let got = unsafe {
            libc::recvmmsg(
                fd,
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let got = got as usize;
        for (k, m) in msgs.iter().take(got).enumerate() {
            let cut = m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            self.lens[k] = (m.msg_len as usize, cut, gro_segment_size(&m.msg_hdr));
        }
        Ok(got)
    }

    /// Buffers received since bound: what the kernel queued on the sockets (a datagram or a
    /// coalesced run), in the unit of [`Receiver::kernel_drops`].
    pub fn buffers(&self) -> u64 {
        self.buffers
    }

    /// Buffers received that held a coalesced run of datagrams (UDP GRO), since bound.
    pub fn coalesced(&self) -> u64 {
        self.coalesced
    }

    /// Buffers the kernel dropped on these sockets (their buffer full), since they were bound:
    /// datagrams, or coalesced runs of them (up to 64 datagrams each).
    pub fn kernel_drops(&self) -> u64 {
        self.sockets.iter().map(|(s, _)| socket_drops(s).unwrap_or(0)).sum()
    }
}

/// One `recvmmsg`/`sendmmsg` header per iovec, without address or control data (the sockets
/// are bound, or connected). The headers point into `iovs`, which must outlive them.
pub(super) fn mmsg_headers(iovs: &mut [libc::iovec]) -> Vec<libc::mmsghdr> {
    iovs.iter_mut()
        .map(|iov| {
            // SAFETY: an all-zero msghdr is valid (no name, no control data).
            let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
            hdr.msg_iov = iov;
            hdr.msg_iovlen = 1;
            libc::mmsghdr { msg_hdr: hdr, msg_len: 0 }
        })
        .collect()
}

/// The GRO segment size a received message's control data carries; 0 when none.
fn gro_segment_size(hdr: &libc::msghdr) -> usize {
    // SAFETY: `hdr` was filled by recvmmsg: its control pointer and length describe what the
    // kernel wrote, which the CMSG_* walk stays inside.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                let size = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                return usize::try_from(size).unwrap_or(0);
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    0
}

/// Hand each datagram of a received buffer to `each(payload, cut)`: a coalesced run (segment
/// size `seg`) as its datagrams of `seg` bytes (the last may be shorter), a lone datagram
/// whole, or as cut when the kernel cut it or it is longer than [`DATAGRAM_BYTES`]. Returns
/// how many datagrams it held.
fn split_run(buf: &[u8], cut: bool, seg: usize, mut each: impl FnMut(&[u8], bool)) -> usize {
    if seg == 0 || buf.len() <= seg {
        each(buf, cut || buf.len() > DATAGRAM_BYTES);
        return 1;
    }
    let mut n = 0;
    for p in buf.chunks(seg) {
        each(p, p.len() > DATAGRAM_BYTES);
        n += 1;
    }
    n
}

/// Set an `int` socket option.
pub(super) fn set_int_option(
    s: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a c_int option value of the right size.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

fn socket_drops(s: &UdpSocket) -> Option<u64> {
    let mut info = [0u32; SK_MEMINFO_VARS];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` has room for `len` bytes; the kernel writes at most that.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    (rc == 0).then(|| u64::from(info[SK_MEMINFO_DROPS]))
}

/// Ask for [`RCVBUF_BYTES`]: forced when the process may (`SO_RCVBUFFORCE`, CAP_NET_ADMIN),
/// else up to `net.core.rmem_max`.
fn grow_rcvbuf(s: &UdpSocket) {
    let size = RCVBUF_BYTES as libc::c_int;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        if set_int_option(s, libc::SOL_SOCKET, opt, size).is_ok() {
            return;
        }
    }
}

pub fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_datagrams_arrive_whole_and_long_ones_are_marked_cut() {
        let mut r = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
        let to = r.local_addrs()[0];
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        for k in 0..300u32 {
            tx.send_to(&k.to_be_bytes(), to).unwrap();
        }
        tx.send_to(&vec![7u8; DATAGRAM_BYTES + 10], to).unwrap();
        let mut seen = Vec::new();
        let mut cut = 0;
        while seen.len() + cut < 301 {
            r.recv(1_000, 10_000, |p, port, _, truncated| {
                assert_eq!(port, to.port());
                if truncated {
                    cut += 1;
                } else {
                    seen.push(u32::from_be_bytes(p.try_into().unwrap()));
                }
            })
            .unwrap();
        }
        assert_eq!(seen, (0..300).collect::<Vec<_>>());
        assert_eq!((cut, r.kernel_drops()), (1, 0));
    }

    #[test]
    fn a_busy_address_is_an_error_naming_it() {
        let first = Receiver::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
        let addr = first.local_addrs()[0];
        let e = Receiver::bind(&[addr]).err().unwrap();
        assert!(e.to_string().starts_with(&format!("--listen {addr}: ")), "{e}");
    }

    #[test]
    fn a_coalesced_run_splits_into_its_datagrams_the_last_one_shorter() {
        let buf: Vec<u8> = (0..250u32).map(|k| k as u8).collect();
        let mut got = Vec::new();
        assert_eq!(split_run(&buf, false, 100, |p, cut| got.push((p.to_vec(), cut))), 3);
        assert_eq!(got[0], (buf[..100].to_vec(), false));
        assert_eq!(got[1], (buf[100..200].to_vec(), false));
        assert_eq!(got[2], (buf[200..].to_vec(), false));
        // No segment size, or one no shorter than the buffer: one datagram.
        for seg in [0, 250, 1_000] {
            let mut n = 0;
            assert_eq!(split_run(&buf, false, seg, |p, _| n += p.len()), 1);
            assert_eq!(n, 250);
        }
        // A lone datagram longer than a jumbo frame's payload is cut; so is one the kernel cut.
        let long = vec![0u8; DATAGRAM_BYTES + 1];
        let mut cut = Vec::new();
        split_run(&long, false, 0, |_, c| cut.push(c));
        split_run(&buf, true, 0, |_, c| cut.push(c));
        split_run(&buf[..DATAGRAM_BYTES.min(250)], false, 0, |_, c| cut.push(c));
        assert_eq!(cut, [true, true, false]);
    }
}
