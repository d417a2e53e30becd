//! UDP in batches: `recvmmsg(2)` takes up to [`BATCH`] datagrams per system call from each
//! listening socket, so a collector pays one call per batch, not per report (the way AmLight's
//! XDP collector and Linux's own `udpgro` tests read at line rate). What the kernel drops
//! because the socket's buffer was full is read apart, from `SO_MEMINFO`.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{SystemTime, UNIX_EPOCH};

/// Datagrams per `recvmmsg` call.
pub const BATCH: usize = 256;

/// Bytes kept per datagram: a jumbo frame's payload. A longer datagram is cut by the kernel
/// (`MSG_TRUNC`) and counted, not decoded.
pub const DATAGRAM_BYTES: usize = 9_216;

/// Receive buffer asked for per socket (the kernel caps it at `net.core.rmem_max` unless the
/// process may force it): 64 MiB holds about 300 ms of reports at 1 M reports/s.
pub const RCVBUF_BYTES: usize = 64 << 20;

/// `SO_MEMINFO` (include/uapi/asm-generic/socket.h) and the index of the drop counter in what
/// it returns, `SK_MEMINFO_DROPS` (include/uapi/linux/sock_diag.h).
const SO_MEMINFO: libc::c_int = 55;
const SK_MEMINFO_DROPS: usize = 8;
const SK_MEMINFO_VARS: usize = 9;

/// The listening sockets and the buffers `recvmmsg` fills.
pub struct Receiver {
    sockets: Vec<(UdpSocket, u16)>,
    bufs: Vec<u8>,
    lens: Vec<(usize, bool)>,
}

impl Receiver {
    /// Bind each address (non-blocking, with a large receive buffer).
    pub fn bind(addrs: &[SocketAddr]) -> io::Result<Receiver> {
        let mut sockets = Vec::new();
        for addr in addrs {
            let s = UdpSocket::bind(addr)
                .map_err(|e| io::Error::new(e.kind(), format!("--listen {addr}: {e}")))?;
            s.set_nonblocking(true)?;
            grow_rcvbuf(&s);
            let port = s.local_addr()?.port();
            sockets.push((s, port));
        }
        Ok(Receiver {
            sockets,
            bufs: vec![0; BATCH * DATAGRAM_BYTES],
            lens: vec![(0, false); BATCH],
        })
    }

    /// The bound addresses (port 0 asked: the one the kernel chose).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets.iter().filter_map(|(s, _)| s.local_addr().ok()).collect()
    }

    /// Wait up to `timeout_ms` for datagrams, then take what is queued, at most `max` of them;
    /// `each(payload, port, recv_ns, truncated)` gets each. Returns how many were taken.
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
                    let (len, cut) = self.lens[k];
                    let at = k * DATAGRAM_BYTES;
                    each(&self.bufs[at..at + len.min(DATAGRAM_BYTES)], port, recv_ns, cut);
                }
                taken += n;
                if n < BATCH {
                    break;
                }
            }
        }
        Ok(taken)
    }

    /// One `recvmmsg` of up to `n` datagrams without waiting; their lengths go to `self.lens`.
    fn recv_batch(&mut self, fd: libc::c_int, n: usize) -> io::Result<usize> {
        let mut iovs: Vec<libc::iovec> = (0..n)
            .map(|k| libc::iovec {
                // SAFETY: k < BATCH, so the slot lies inside `bufs`.
                iov_base: unsafe { self.bufs.as_mut_ptr().add(k * DATAGRAM_BYTES) }.cast(),
                iov_len: DATAGRAM_BYTES,
            })
            .collect();
        let mut msgs = mmsg_headers(&mut iovs);
        // SAFETY: `msgs` points at `n` headers whose iovecs point into `bufs`, all alive for
        // the call; MSG_DONTWAIT makes it return at once.
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
            self.lens[k] = (m.msg_len as usize, m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0);
        }
        Ok(got)
    }

    /// Datagrams the kernel dropped on these sockets (buffer full), since they were bound.
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
        // SAFETY: a c_int option value of the right size.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
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
}
