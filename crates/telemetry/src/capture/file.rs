//! pcap and pcapng files to frames, streaming from any `Read` through one bounded buffer.
//!
//! Formats: legacy pcap (draft-ietf-opsawg-pcap §4–5: both byte orders, µs magic `a1b2c3d4`,
//! ns magic `a1b23c4d`, Kuznetzov's modified `a1b2cd34`) and pcapng (draft-ietf-opsawg-pcapng
//! §4: sections in either byte order, several interfaces each with its own linktype,
//! `if_tsresol` and `if_tsoffset`). pcapng block bodies are decoded by the `pcap-parser` crate;
//! this file owns the buffer, the length checks and the error offsets, which count bytes from
//! the start of the FILE.
//!
//! The buffer grows by doubling only after it has been filled with bytes actually read, so a
//! forged length field can never make us allocate more than twice the input's size.

use super::linktype::Linktype;
use crate::error::DecodeError;
use pcap_parser::pcapng::{Block, parse_block_be, parse_block_le};
use pcap_parser::traits::PcapNGPacketBlock;
use std::io::{self, Read};
use std::ops::Range;

/// One captured frame: when, on which interface, with which link layer, and its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Nanoseconds since the Unix epoch (pcapng `if_tsoffset` applied).
    pub ts_ns: u64,
    /// pcapng interface id; 0 for legacy pcap.
    pub interface: u32,
    pub linktype: Linktype,
    /// Length of the packet on the wire (may exceed `data.len()` when the snaplen cut it).
    pub orig_len: u32,
    pub data: &'a [u8],
}

/// libpcap's largest snapshot length, `MAXIMUM_SNAPLEN` in `pcap-int.h`: tcpdump never writes
/// a longer record, so a longer captured length is corruption unless the file's own snaplen
/// announces it.
pub const MAXIMUM_SNAPLEN: u32 = 262_144;

/// Largest record or block we accept whatever the headers say (16 MiB). Bounds the buffer.
pub const MAX_BLOCK_BYTES: usize = 16 << 20;

/// Largest orig_len taken as real: no link's frame nor any offload's aggregate comes near 16 MiB
/// (Linux's BIG TCP GSO/GRO packets stop at 512 KiB); 2^32 − 1 is a corrupt field.
pub const MAX_ORIG_LEN: u32 = 16 << 20;

/// Starting buffer size: large reads keep the scan at file-read speed.
const INITIAL_BUFFER: usize = 256 << 10;

/// Legacy pcap magics as written in the file's first four bytes read little-endian
/// (draft-ietf-opsawg-pcap §4 "File Header").
const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const MAGIC_MODIFIED: u32 = 0xa1b2_cd34;
/// pcapng Section Header Block type and byte-order magic (draft-ietf-opsawg-pcapng §4.1).
const SHB_TYPE: u32 = 0x0a0d_0d0a;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
/// pcapng block types we act on (draft-ietf-opsawg-pcapng §4.2–4.4).
const IDB_TYPE: u32 = 1;
const SPB_TYPE: u32 = 3;
const EPB_TYPE: u32 = 6;

/// One pcapng interface: what its packets' timestamps and bytes mean.
#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: Linktype,
    /// Timestamp units per second (`if_tsresol`, default 10^6).
    units_per_s: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_s: i64,
}

/// A legacy pcap file's header, as far as records need it.
#[derive(Clone, Copy, Debug)]
struct Legacy {
    big_endian: bool,
    nanos: bool,
    modified: bool,
    linktype: Linktype,
    max_caplen: u32,
    /// The file's own snapshot length (0: not stated, as some writers leave it).
    snaplen: u32,
}

/// The current pcapng section.
#[derive(Debug, Default)]
struct Section {
    big_endian: bool,
    interfaces: Vec<Interface>,
    last_ts_ns: u64,
}

/// What the next record resolved to, before borrowing its bytes.
struct Pending {
    ts_ns: u64,
    interface: u32,
    linktype: Linktype,
    orig_len: u32,
    data: Range<usize>,
}

/// Streaming reader of a pcap or pcapng file. Frames borrow the reader's buffer, so each must be
/// dropped before the next call to [`CaptureReader::next`]. After the first error the reader
/// returns `None`.
///
/// A file that ends inside a record (as a capture stopped mid-write does) ends the frames there
/// without an error: every complete record before the cut is read, and
/// [`CaptureReader::truncated`] says where the cut is and what the record needed, as libpcap
/// reads such a file ("truncated dump file"). A length field that cannot be right (longer than
/// any snaplen or block allows) is an error wherever it sits.
pub struct CaptureReader<R: Read> {
    src: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`; `buf[start]` is file byte `file_off`.
    start: usize,
    end: usize,
    file_off: usize,
    /// Length of the record handed out last, consumed on the next call.
    last_len: usize,
    eof: bool,
    failed: bool,
    /// The file ended inside the record at this offset (see [`CaptureReader::truncated`]).
    truncated: Option<DecodeError>,
    /// Records read whose lengths cannot be right, and the first of them
    /// (see [`CaptureReader::implausible`]).
    implausible: u64,
    first_implausible: Option<DecodeError>,
    /// `None` for pcapng.
    legacy: Option<Legacy>,
    section: Section,
}

impl<R: Read> CaptureReader<R> {
    /// File bytes consumed so far (headers and the frames handed out before the last one), for
    /// progress reporting.
    pub fn position(&self) -> u64 {
        self.file_off as u64
    }

    /// Where the file ended inside a record, once [`CaptureReader::next`] has returned `None`
    /// for that reason: the record's file offset, the part that was cut (`"pcap record data"`,
    /// `"pcapng block header"`, ...), the bytes there and the bytes it needed.
    pub fn truncated(&self) -> Option<&DecodeError> {
        self.truncated.as_ref()
    }

    /// Records read so far whose lengths no capture produces (orig_len 0 or beyond
    /// [`MAX_ORIG_LEN`], incl_len above orig_len or above the file's snaplen), and the first
    /// one with its file offset. Their bytes are still handed out: the length fields alone are
    /// wrong, which a corrupt or hand-edited file shows.
    pub fn implausible(&self) -> (u64, Option<&DecodeError>) {
        (self.implausible, self.first_implausible.as_ref())
    }

    /// Check one record's lengths; `off` is the file offset of its incl_len/caplen field, the
    /// orig_len field following 4 bytes on.
    fn check_lengths(&mut self, off: usize, caplen: u32, orig_len: u32, snaplen: u32) {
        let bad = if orig_len == 0 || orig_len > MAX_ORIG_LEN {
            Some(DecodeError::new(
                off + 4,
                "orig_len",
                u64::from(orig_len),
                format!("1..={MAX_ORIG_LEN} and ≥ incl_len {caplen}"),
            ))
        } else if caplen > orig_len {
            Some(DecodeError::new(
                off,
                "incl_len",
                u64::from(caplen),
                format!("≤ orig_len {orig_len} (no more is captured than was on the wire)"),
            ))
        } else if snaplen != 0 && caplen > snaplen {
            Some(DecodeError::new(
                off,
                "incl_len",
                u64::from(caplen),
                format!("≤ the file's snaplen {snaplen}"),
            ))
        } else {
            None
        };
        if let Some(e) = bad {
            self.implausible += 1;
            self.first_implausible.get_or_insert(e);
        }
    }

    /// Reads the file header (pcap) or first section header (pcapng) to learn the format.
    pub fn new(src: R) -> Result<Self, DecodeError> {
        let mut r = CaptureReader {
            src,
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
            file_off: 0,
            last_len: 0,
            eof: false,
            failed: false,
            truncated: None,
            implausible: 0,
            first_implausible: None,
            legacy: None,
            section: Section::default(),
        };
        r.need(4, "magic")?;
        let magic = r.u32_at(0, false);
        if magic == SHB_TYPE {
            // The SHB is parsed as the first block, which also fixes the byte order.
            return Ok(r);
        }
        let (big_endian, nanos, modified) = match magic {
            MAGIC_US => (false, false, false),
            MAGIC_NS => (false, true, false),
            MAGIC_MODIFIED => (false, false, true),
            m if m.swap_bytes() == MAGIC_US => (true, false, false),
            m if m.swap_bytes() == MAGIC_NS => (true, true, false),
            m if m.swap_bytes() == MAGIC_MODIFIED => (true, false, true),
            m => {
                return Err(DecodeError::new(
                    0,
                    "magic",
                    u64::from(m),
                    "a pcap magic (a1b2c3d4, a1b23c4d, a1b2cd34, either byte order) or pcapng 0a0d0d0a",
                ));
            }
        };
        r.need(24, "pcap file header")?;
        let snaplen = r.u32_at(16, big_endian);
        // The low 16 bits are the link type; the high bits carry FCS information
        // (draft-ietf-opsawg-pcap §4 "LinkType and additional information").
        let linktype = Linktype((r.u32_at(20, big_endian) & 0xffff) as u16);
        r.consume(24);
        let max_caplen = snaplen.clamp(MAXIMUM_SNAPLEN, MAX_BLOCK_BYTES as u32 - 24);
        r.legacy = Some(Legacy { big_endian, nanos, modified, linktype, max_caplen, snaplen });
        Ok(r)
    }

    /// The next frame, `None` at the end of the file or after an error.
    #[allow(clippy::should_implement_trait)] // lending: the frame borrows the reader
    pub fn next(&mut self) -> Option<Result<Frame<'_>, DecodeError>> {
        if self.failed {
            return None;
        }
        let last = std::mem::take(&mut self.last_len);
        self.consume(last);
        let step = match self.legacy {
            Some(legacy) => self.next_legacy(legacy),
            None => self.next_ng(),
        };
        match step {
            Ok(Some(p)) => Some(Ok(Frame {
                ts_ns: p.ts_ns,
                interface: p.interface,
                linktype: p.linktype,
                orig_len: p.orig_len,
                data: &self.buf[p.data],
            })),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }

    fn next_legacy(&mut self, legacy: Legacy) -> Result<Option<Pending>, DecodeError> {
        let Legacy { big_endian, nanos, modified, linktype, max_caplen, snaplen } = legacy;
        if !self.fill_to(1)? {
            return Ok(None);
        }
        let hdr_len = if modified { 24 } else { 16 };
        if !self.need_record(hdr_len, "pcap record header")? {
            return Ok(None);
        }
        // The record header's fields in the file's byte order (draft-ietf-opsawg-pcap §5); the
        // modified format's 8 more bytes (ifindex, protocol, pkt_type) say nothing we use.
        // (pcap-parser 0.17 reads modified records as little-endian whatever the file says.)
        let mut h = [0u8; 16];
        h.copy_from_slice(&self.buf[self.start..self.start + 16]);
        let field = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
        };
        let (ts_sec, ts_frac, caplen, orig_len) = (field(0), field(4), field(8), field(12));
        if caplen > max_caplen {
            return Err(DecodeError::new(
                self.file_off + 8,
                "incl_len",
                u64::from(caplen),
                format!("≤ {max_caplen} (the larger of the file's snaplen and libpcap's maximum)"),
            ));
        }
        let total = hdr_len + caplen as usize;
        if !self.need_record(total, "pcap record data")? {
            return Ok(None);
        }
        self.check_lengths(self.file_off + 8, caplen, orig_len, snaplen);
        let frac_ns = if nanos { u64::from(ts_frac) } else { u64::from(ts_frac) * 1000 };
        let ts_ns = u64::from(ts_sec) * 1_000_000_000 + frac_ns;
        let data = self.start + hdr_len..self.start + total;
        self.last_len = total;
        Ok(Some(Pending { ts_ns, interface: 0, linktype, orig_len, data }))
    }

    fn next_ng(&mut self) -> Result<Option<Pending>, DecodeError> {
        loop {
            if !self.fill_to(1)? {
                return Ok(None);
            }
            // The first block is the section header that makes the file a pcapng file: cut
            // short, there is no capture to speak of (as a cut pcap file header).
            if self.file_off == 0 {
                self.need(12, "pcapng block header")?;
            } else if !self.need_record(12, "pcapng block header")? {
                return Ok(None);
            }
            let mut big_endian = self.section.big_endian;
            let block_type = self.u32_at(0, big_endian);
            if block_type == SHB_TYPE {
                // A new section may switch byte order; its magic says which.
                big_endian = match self.u32_at(8, false) {
                    BYTE_ORDER_MAGIC => false,
                    m if m.swap_bytes() == BYTE_ORDER_MAGIC => true,
                    m => {
                        return Err(DecodeError::new(
                            self.file_off + 8,
                            "byte_order_magic",
                            u64::from(m),
                            "1a2b3c4d in either byte order",
                        ));
                    }
                };
            }
            let len = self.u32_at(4, big_endian) as usize;
            if len < 12 || !len.is_multiple_of(4) || len > MAX_BLOCK_BYTES {
                return Err(DecodeError::new(
                    self.file_off + 4,
                    "block_total_length",
                    len as u64,
                    format!("a multiple of 4 in 12..={MAX_BLOCK_BYTES}"),
                ));
            }
            if self.file_off == 0 {
                self.need(len, "pcapng block")?;
            } else if !self.need_record(len, "pcapng block")? {
                return Ok(None);
            }
            self.last_len = len;
            match block_type {
                SHB_TYPE | IDB_TYPE | EPB_TYPE | SPB_TYPE => {}
                // Statistics, name resolution, secrets, custom…: nothing about packets.
                _ => {
                    let n = std::mem::take(&mut self.last_len);
                    self.consume(n);
                    continue;
                }
            }
            let off = self.file_off;
            let bytes = &self.buf[self.start..self.start + len];
            let parsed = if big_endian { parse_block_be(bytes) } else { parse_block_le(bytes) };
            let block = match parsed {
                Ok((_, b)) => b,
                Err(_) => {
                    return Err(DecodeError::new(
                        off,
                        "pcapng block",
                        u64::from(block_type),
                        "a well-formed block of this type (fields and options within its length)",
                    ));
                }
            };
            let Section { interfaces, last_ts_ns, big_endian: order } = &mut self.section;
            match block {
                Block::SectionHeader(_) => {
                    *order = big_endian;
                    interfaces.clear();
                }
                Block::InterfaceDescription(idb) => {
                    let units_per_s = units_per_second(idb.if_tsresol).ok_or_else(|| {
                        DecodeError::new(
                            off,
                            "if_tsresol",
                            u64::from(idb.if_tsresol),
                            "10^-n with n ≤ 19 or 2^-n with n ≤ 63",
                        )
                    })?;
                    let linktype = Linktype(idb.linktype.0 as u16);
                    interfaces.push(Interface { linktype, units_per_s, offset_s: idb.if_tsoffset });
                }
                Block::EnhancedPacket(epb) => {
                    let Some(iface) = interfaces.get(epb.if_id as usize).copied() else {
                        return Err(DecodeError::new(
                            off + 8,
                            "interface_id",
                            u64::from(epb.if_id),
                            format!("< {} (interfaces described so far)", interfaces.len()),
                        ));
                    };
                    let ticks = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                    let ts_ns = ticks_to_ns(ticks, iface.units_per_s, iface.offset_s);
                    *last_ts_ns = ts_ns;
                    let (interface, orig_len) = (epb.if_id, epb.origlen);
                    let data = range_in(&self.buf, epb.packet_data());
                    // EPB: caplen at byte 20 of the block, orig_len at 24 (pcapng §4.3).
                    let caplen = data.len() as u32;
                    self.check_lengths(off + 20, caplen, orig_len, 0);
                    return Ok(Some(Pending {
                        ts_ns,
                        interface,
                        linktype: iface.linktype,
                        orig_len,
                        data,
                    }));
                }
                Block::SimplePacket(spb) => {
                    // An SPB belongs to interface 0 and has no timestamp
                    // (draft-ietf-opsawg-pcapng §4.4): we give it the last one seen.
                    let Some(iface) = interfaces.first().copied() else {
                        return Err(DecodeError::new(
                            off,
                            "simple packet block",
                            0,
                            "an interface description before it",
                        ));
                    };
                    let ts_ns = *last_ts_ns;
                    let orig_len = spb.origlen;
                    let data = range_in(&self.buf, spb.packet_data());
                    return Ok(Some(Pending {
                        ts_ns,
                        interface: 0,
                        linktype: iface.linktype,
                        orig_len,
                        data,
                    }));
                }
                _ => {}
            }
            let n = std::mem::take(&mut self.last_len);
            self.consume(n);
        }
    }

    /// A u32 at `at` bytes past the unconsumed start (caller checked the length).
    fn u32_at(&self, at: usize, big_endian: bool) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.buf[self.start + at..self.start + at + 4]);
        if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.file_off += n;
    }

    /// Makes `n` bytes available or reports the truncation at the current file offset.
    fn need(&mut self, n: usize, field: &'static str) -> Result<(), DecodeError> {
        if self.fill_to(n)? {
            Ok(())
        } else {
            Err(DecodeError::truncated(self.file_off, field, self.end - self.start, n))
        }
    }

    /// Makes `n` bytes of the record at the current offset available; `false` when the file
    /// ends first, the cut kept for [`CaptureReader::truncated`].
    #[inline]
    fn need_record(&mut self, n: usize, field: &'static str) -> Result<bool, DecodeError> {
        if self.end - self.start >= n || self.fill_to(n)? {
            return Ok(true);
        }
        let available = self.end - self.start;
        self.truncated = Some(DecodeError::truncated(self.file_off, field, available, n));
        Ok(false)
    }

    /// Reads until `n` unconsumed bytes are buffered; `false` if the file ends first.
    fn fill_to(&mut self, n: usize) -> Result<bool, DecodeError> {
        while self.end - self.start < n {
            if self.eof {
                return Ok(false);
            }
            if self.end == self.buf.len() {
                if self.start > 0 {
                    self.buf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    // Full of real bytes and still short: doubling stays within 2× the input.
                    let grown = (self.buf.len() * 2).min(MAX_BLOCK_BYTES.max(n));
                    self.buf.resize(grown, 0);
                }
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(DecodeError::new(
                        self.file_off + (self.end - self.start),
                        "read",
                        0,
                        format!("a readable file ({e})"),
                    ));
                }
            }
        }
        Ok(true)
    }
}

/// Where `sub` (a slice of `buf`) lies in `buf`.
fn range_in(buf: &[u8], sub: &[u8]) -> Range<usize> {
    let begin = (sub.as_ptr() as usize).saturating_sub(buf.as_ptr() as usize);
    begin..begin + sub.len()
}

/// `if_tsresol` (draft-ietf-opsawg-pcapng §4.2): bit 7 clear, units of 10^-n s; set, 2^-n s
/// with n in the low 7 bits. (pcap-parser 0.17's `build_ts_resolution` compares the whole byte
/// with 63 and so refuses every 2^-n resolution; we decode it here.)
fn units_per_second(tsresol: u8) -> Option<u64> {
    let n = u32::from(tsresol & 0x7f);
    if tsresol & 0x80 == 0 { 10u64.checked_pow(n) } else { 1u64.checked_shl(n).filter(|_| n < 64) }
}

/// pcapng ticks to Unix nanoseconds: exact for 10^-n and 2^-n units, saturating at the ends of
/// `u64` instead of overflowing.
fn ticks_to_ns(ticks: u64, units_per_s: u64, offset_s: i64) -> u64 {
    let ns = u128::from(ticks) * 1_000_000_000 / u128::from(units_per_s);
    let shifted = ns as i128 + i128::from(offset_s) * 1_000_000_000;
    shifted.clamp(0, i128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testwrite::*;
    use proptest::prelude::*;

    /// (ts_ns, interface, linktype, orig_len, data) of one frame.
    type Owned = (u64, u32, u16, u32, Vec<u8>);

    /// Frames as owned values, or the first error; a cut last record is an error here too, so
    /// tests of whole files see it.
    fn read_all(bytes: &[u8]) -> Result<Vec<Owned>, DecodeError> {
        let (frames, cut) = read_cut(bytes)?;
        match cut {
            Some(e) => Err(e),
            None => Ok(frames),
        }
    }

    /// Frames as owned values and where the file was cut, or the first error.
    fn read_cut(bytes: &[u8]) -> Result<(Vec<Owned>, Option<DecodeError>), DecodeError> {
        let mut r = CaptureReader::new(bytes)?;
        let mut out = Vec::new();
        while let Some(f) = r.next() {
            let f = f?;
            out.push((f.ts_ns, f.interface, f.linktype.0, f.orig_len, f.data.to_vec()));
        }
        Ok((out, r.truncated().cloned()))
    }

    /// A `Read` that hands out at most `step` bytes per call, to exercise every refill path.
    struct Trickle<'a> {
        rest: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.rest.len());
            buf[..n].copy_from_slice(&self.rest[..n]);
            self.rest = &self.rest[n..];
            Ok(n)
        }
    }

    // ---- legacy pcap ----

    #[test]
    fn pcap_little_endian_microseconds_read_back_exactly() {
        let mut f = pcap_header(false, false, 1, 65535);
        pcap_record(&mut f, false, 1_700_000_000, 999_999, &[1, 2, 3], 60);
        pcap_record(&mut f, false, 1_700_000_001, 5, &[4; 20], 20);
        let got = read_all(&f).unwrap();
        assert_eq!(
            got,
            vec![
                (1_700_000_000_999_999_000, 0, 1, 60, vec![1, 2, 3]),
                (1_700_000_001_000_005_000, 0, 1, 20, vec![4; 20]),
            ]
        );
    }

    #[test]
    fn pcap_big_endian_nanoseconds_read_back_exactly() {
        let mut f = pcap_header(true, true, 276, 262_144);
        pcap_record(&mut f, true, 7, 123_456_789, &[9, 8, 7, 6], 1514);
        assert_eq!(read_all(&f).unwrap(), vec![(7_123_456_789, 0, 276, 1514, vec![9, 8, 7, 6])]);
    }

    #[test]
    fn pcap_modified_records_read_back_in_both_byte_orders() {
        for be in [false, true] {
            let mut f = pcap_header(be, false, 1, 65535);
            let magic =
                if be { MAGIC_MODIFIED.to_be_bytes() } else { MAGIC_MODIFIED.to_le_bytes() };
            f[..4].copy_from_slice(&magic);
            pcap_record(&mut f, be, 3, 250, &[5, 6, 7], 90);
            // ifindex, protocol, pkt_type and a pad byte sit between the header and the data.
            let at = f.len() - 3;
            f.splice(at..at, [9u8; 8]);
            assert_eq!(read_all(&f).unwrap(), vec![(3_000_250_000, 0, 1, 90, vec![5, 6, 7])]);
        }
    }

    #[test]
    fn pcap_fcs_bits_above_the_linktype_are_ignored() {
        // LinkType 1 with the F bit (26) and an FCS length of 4 (bits 28–31).
        let mut f = pcap_header(false, false, 1, 65535);
        f[20..24].copy_from_slice(&(1u32 | 1 << 26 | 4 << 28).to_le_bytes());
        pcap_record(&mut f, false, 0, 0, &[0; 4], 4);
        assert_eq!(read_all(&f).unwrap()[0].2, 1);
    }

    #[test]
    fn pcap_one_byte_reads_and_a_record_larger_than_the_buffer() {
        let big = vec![0xab; INITIAL_BUFFER + 1000];
        let mut f = pcap_header(false, false, 1, 1 << 20);
        pcap_record(&mut f, false, 1, 2, &[1], 1);
        pcap_record(&mut f, false, 3, 4, &big, big.len() as u32);
        pcap_record(&mut f, false, 5, 6, &[2, 3], 2);
        let mut r = CaptureReader::new(Trickle { rest: &f, step: 1 }).unwrap();
        let mut lens = Vec::new();
        while let Some(fr) = r.next() {
            let fr = fr.unwrap();
            assert!(fr.data.iter().all(|&b| b == fr.data[0]) || fr.data.len() == 2);
            lens.push((fr.ts_ns, fr.data.len()));
        }
        assert_eq!(lens, vec![(1_000_002_000, 1), (3_000_004_000, big.len()), (5_000_006_000, 2)]);
        // 7919 bytes per read: records straddle refills at every alignment.
        let mut r = CaptureReader::new(Trickle { rest: &f, step: 7919 }).unwrap();
        let mut n = 0;
        while let Some(fr) = r.next() {
            fr.unwrap();
            n += 1;
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn pcap_truncated_file_header_names_offset_zero() {
        let f = pcap_header(false, false, 1, 65535);
        let e = CaptureReader::new(&f[..10]).err().unwrap();
        assert_eq!((e.offset, e.field, e.value), (0, "pcap file header", 10));
        let e = CaptureReader::new(&f[..2]).err().unwrap();
        assert_eq!((e.offset, e.field), (0, "magic"));
    }

    #[test]
    fn pcap_bad_magic_is_named() {
        let e = CaptureReader::new(&[0xde, 0xad, 0xbe, 0xef, 0, 0][..]).err().unwrap();
        assert_eq!((e.offset, e.field, e.value), (0, "magic", 0xefbe_adde));
    }

    #[test]
    fn pcap_cut_record_header_and_data_end_the_frames_at_the_record_offset() {
        let mut f = pcap_header(false, false, 1, 65535);
        pcap_record(&mut f, false, 0, 0, &[1; 10], 10);
        let second = f.len();
        pcap_record(&mut f, false, 0, 0, &[2; 10], 10);
        // Header cut: 24 + 26 + 7 bytes. The first record is read, the cut is reported.
        let (frames, cut) = read_cut(&f[..second + 7]).unwrap();
        assert_eq!(frames, vec![(0, 0, 1, 10, vec![1; 10])]);
        let e = cut.unwrap();
        assert_eq!((e.offset, e.field, e.value), (second, "pcap record header", 7));
        // Data cut: the header is whole, 3 of 10 data bytes are there.
        let (frames, cut) = read_cut(&f[..second + 19]).unwrap();
        assert_eq!(frames.len(), 1);
        let e = cut.unwrap();
        assert_eq!((e.offset, e.field, e.value), (second, "pcap record data", 19));
        assert_eq!(
            e.to_string(),
            format!("byte {second}: pcap record data = 19, expected 26 bytes, but only 19 remain")
        );
        // A cut on a record boundary is a complete file.
        assert_eq!(read_cut(&f[..second]).unwrap(), (frames, None));
    }

    #[test]
    fn pcap_cut_at_every_byte_of_the_last_record_keeps_the_records_before_it() {
        for (be, nanos, modified) in
            [(false, false, false), (true, true, false), (false, false, true), (true, false, true)]
        {
            let mut f = pcap_header(be, nanos, 1, 65535);
            if modified {
                f[..4].copy_from_slice(&if be {
                    MAGIC_MODIFIED.to_be_bytes()
                } else {
                    MAGIC_MODIFIED.to_le_bytes()
                });
            }
            let hdr = if modified { 24 } else { 16 };
            let mut starts = Vec::new();
            for k in 0..3u8 {
                starts.push(f.len());
                pcap_record(&mut f, be, u32::from(k), 0, &[k; 40], 40);
                // The modified format's record header has 8 more bytes (ifindex, protocol,
                // pkt_type, pad) behind the usual 16.
                if modified {
                    let at = f.len() - 40;
                    f.splice(at..at, [0u8; 8]);
                }
            }
            let last = starts[2];
            for cut in last + 1..f.len() {
                let (frames, e) = read_cut(&f[..cut]).unwrap();
                assert_eq!(frames.iter().map(|x| x.4[0]).collect::<Vec<_>>(), [0, 1], "cut {cut}");
                let e = e.unwrap_or_else(|| panic!("cut {cut}: no truncation reported"));
                let field =
                    if cut - last < hdr { "pcap record header" } else { "pcap record data" };
                let needed = if field == "pcap record header" { hdr } else { hdr + 40 };
                assert_eq!((e.offset, e.field, e.value), (last, field, (cut - last) as u64));
                assert!(e.expected.starts_with(&format!("{needed} bytes")), "{e}");
            }
        }
    }

    #[test]
    fn pcap_impossible_record_lengths_are_counted_with_their_offset() {
        // Record k at 24 + 26·k: incl_len at +8, orig_len at +12.
        let at = |k: usize| 24 + 26 * k;
        for (orig, field, value, offset) in [
            (0u32, "orig_len", 0u64, at(1) + 12),
            (u32::MAX, "orig_len", u64::from(u32::MAX), at(1) + 12),
            (9, "incl_len", 10, at(1) + 8),
        ] {
            let mut f = pcap_header(false, false, 1, 65535);
            for k in 0..3u8 {
                pcap_record(&mut f, false, 0, 0, &[k; 10], if k == 1 { orig } else { 10 });
            }
            let mut r = CaptureReader::new(&f[..]).unwrap();
            let mut n = 0;
            while let Some(frame) = r.next() {
                assert_eq!(frame.unwrap().data.len(), 10);
                n += 1;
            }
            assert_eq!(n, 3, "the frames are still read");
            let (count, first) = r.implausible();
            let e = first.unwrap();
            assert_eq!((count, e.field, e.value, e.offset), (1, field, value, offset));
        }
        // Beyond the file's own snaplen of 8.
        let mut f = pcap_header(false, false, 1, 8);
        pcap_record(&mut f, false, 0, 0, &[0; 8], 8);
        pcap_record(&mut f, false, 0, 0, &[0; 10], 10);
        let mut r = CaptureReader::new(&f[..]).unwrap();
        while r.next().is_some() {}
        let (count, e) = r.implausible();
        assert_eq!((count, e.unwrap().offset, e.unwrap().field), (1, 24 + 24 + 8, "incl_len"));
        assert!(e.unwrap().to_string().contains("snaplen 8"), "{}", e.unwrap());
    }

    #[test]
    fn pcap_absurd_incl_len_mid_file_is_an_error_not_a_cut() {
        let mut f = pcap_header(false, false, 1, 65535);
        for k in 0..3u8 {
            pcap_record(&mut f, false, 0, 0, &[k; 10], 10);
        }
        let second = 24 + 26;
        f[second + 8..second + 12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        let mut r = CaptureReader::new(&f[..]).unwrap();
        assert!(r.next().unwrap().is_ok());
        let e = r.next().unwrap().unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (second + 8, "incl_len", 0xffff_fff0));
        assert!(r.next().is_none() && r.truncated().is_none());
    }

    #[test]
    fn pcap_incl_len_beyond_the_maximum_snaplen_is_refused_before_reading() {
        let mut f = pcap_header(false, false, 1, 65535);
        pcap_record(&mut f, false, 0, 0, &[], 0);
        f[24 + 8..24 + 12].copy_from_slice(&(MAXIMUM_SNAPLEN + 1).to_le_bytes());
        let e = read_all(&f).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (32, "incl_len", 262_145));
    }

    #[test]
    fn maximum_snaplen_is_libpcaps() {
        assert_eq!(MAXIMUM_SNAPLEN, 262_144);
    }

    // ---- pcapng ----

    #[test]
    fn pcapng_interfaces_keep_their_own_linktype_and_resolution() {
        let mut f = Vec::new();
        ng_shb(&mut f, false);
        ng_idb(&mut f, false, 1, None, None); // µs by default
        ng_idb(&mut f, false, 276, Some(9), None); // ns
        ng_idb(&mut f, false, 101, Some(0x80 | 20), Some(10)); // 2^-20 s, +10 s
        ng_epb(&mut f, false, 0, 1_700_000_000_123_456, &[1, 2, 3, 4, 5], 64);
        ng_block(&mut f, false, 5, &[0; 16]); // interface statistics: skipped
        ng_epb(&mut f, false, 1, 1_700_000_000_123_456_789, &[6; 7], 7);
        ng_epb(&mut f, false, 2, 3 << 19, &[7], 1); // 1.5 s
        assert_eq!(
            read_all(&f).unwrap(),
            vec![
                (1_700_000_000_123_456_000, 0, 1, 64, vec![1, 2, 3, 4, 5]),
                (1_700_000_000_123_456_789, 1, 276, 7, vec![6; 7]),
                (11_500_000_000, 2, 101, 1, vec![7]),
            ]
        );
    }

    #[test]
    fn pcapng_big_endian_sections_and_a_byte_order_switch() {
        let mut f = Vec::new();
        ng_shb(&mut f, true);
        ng_idb(&mut f, true, 1, Some(9), None);
        ng_epb(&mut f, true, 0, 42, &[1, 2], 2);
        // A second section in little endian forgets the first section's interfaces.
        ng_shb(&mut f, false);
        ng_idb(&mut f, false, 113, None, None);
        ng_epb(&mut f, false, 0, 3, &[3], 1);
        assert_eq!(
            read_all(&f).unwrap(),
            vec![(42, 0, 1, 2, vec![1, 2]), (3_000, 0, 113, 1, vec![3])]
        );
    }

    #[test]
    fn pcapng_unknown_interface_is_named_at_its_field() {
        let mut f = Vec::new();
        ng_shb(&mut f, false);
        ng_idb(&mut f, false, 1, None, None);
        let at = f.len();
        ng_epb(&mut f, false, 3, 0, &[0], 1);
        let e = read_all(&f).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (at + 8, "interface_id", 3));
    }

    #[test]
    fn pcapng_truncated_and_malformed_blocks_give_file_offsets() {
        let mut f = Vec::new();
        ng_shb(&mut f, false);
        ng_idb(&mut f, false, 1, None, None);
        let at = f.len();
        ng_epb(&mut f, false, 0, 0, &[0; 8], 8);
        let e = read_all(&f[..f.len() - 1]).unwrap_err();
        assert_eq!((e.offset, e.field), (at, "pcapng block"));
        // A huge length is refused even in the last block: no snaplen allows it.
        let mut bad = f.clone();
        bad[at + 4..at + 8].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        let e = read_cut(&bad).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (at + 4, "block_total_length", 0x7fff_fff0));
        let mut bad = f.clone();
        bad[at + 4..at + 8].copy_from_slice(&13u32.to_le_bytes());
        let e = read_all(&bad).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (at + 4, "block_total_length", 13));
        let mut bad = f.clone();
        bad[8..12].copy_from_slice(&[1, 2, 3, 4]);
        let e = read_all(&bad).unwrap_err();
        assert_eq!((e.offset, e.field), (8, "byte_order_magic"));
        // The trailing length disagrees with the leading one: pcap-parser refuses the block.
        let mut bad = f.clone();
        let end = bad.len();
        bad[end - 4..].copy_from_slice(&44u32.to_le_bytes());
        let e = read_all(&bad).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (at, "pcapng block", 6));
    }

    #[test]
    fn pcapng_cut_at_every_byte_of_the_last_block_keeps_the_packets_before_it() {
        for be in [false, true] {
            let mut f = Vec::new();
            ng_shb(&mut f, be);
            ng_idb(&mut f, be, 1, Some(9), None);
            ng_epb(&mut f, be, 0, 5, &[1; 30], 30);
            ng_block(&mut f, be, 5, &[0; 16]); // interface statistics between packets
            ng_epb(&mut f, be, 0, 6, &[2; 30], 30);
            let last = f.len();
            ng_epb(&mut f, be, 0, 7, &[3; 30], 30);
            for cut in last + 1..f.len() {
                let (frames, e) = read_cut(&f[..cut]).unwrap();
                assert_eq!(frames.iter().map(|x| x.4[0]).collect::<Vec<_>>(), [1, 2], "cut {cut}");
                let e = e.unwrap_or_else(|| panic!("cut {cut}: no truncation reported"));
                let field = if cut - last < 12 { "pcapng block header" } else { "pcapng block" };
                assert_eq!((e.offset, e.field, e.value), (last, field, (cut - last) as u64));
            }
            // A cut inside a second section's header or an interface block reads the same way.
            let mut g = f.clone();
            let shb = g.len();
            ng_shb(&mut g, !be);
            let (frames, e) = read_cut(&g[..shb + 20]).unwrap();
            assert_eq!((frames.len(), e.unwrap().offset), (3, shb));
        }
    }

    #[test]
    fn pcapng_cut_first_section_header_is_not_a_capture() {
        let mut f = Vec::new();
        ng_shb(&mut f, false);
        for cut in [4, 11, 12, f.len() - 1] {
            let e = read_cut(&f[..cut]).unwrap_err();
            assert_eq!((e.offset, e.value), (0, cut as u64), "cut {cut}: {e}");
        }
    }

    #[test]
    fn pcapng_absurd_block_length_mid_file_is_an_error_not_a_cut() {
        let mut f = Vec::new();
        ng_shb(&mut f, false);
        ng_idb(&mut f, false, 1, None, None);
        ng_epb(&mut f, false, 0, 1, &[1; 8], 8);
        let at = f.len();
        ng_epb(&mut f, false, 0, 2, &[2; 8], 8);
        ng_epb(&mut f, false, 0, 3, &[3; 8], 8);
        f[at + 4..at + 8].copy_from_slice(&(MAX_BLOCK_BYTES as u32 + 4).to_le_bytes());
        let mut r = CaptureReader::new(&f[..]).unwrap();
        assert!(r.next().unwrap().is_ok());
        let e = r.next().unwrap().unwrap_err();
        assert_eq!((e.offset, e.field), (at + 4, "block_total_length"));
        assert!(r.next().is_none() && r.truncated().is_none());
    }

    #[test]
    fn pcapng_tsoffset_and_resolution_saturate_instead_of_overflowing() {
        assert_eq!(ticks_to_ns(u64::MAX, 1, 0), u64::MAX);
        assert_eq!(ticks_to_ns(1, 1, -5), 0);
        assert_eq!(ticks_to_ns(3, 1 << 1, 0), 1_500_000_000);
    }

    #[test]
    fn pcapng_tsresol_decodes_powers_of_ten_and_two() {
        assert_eq!(units_per_second(6), Some(1_000_000));
        assert_eq!(units_per_second(9), Some(1_000_000_000));
        assert_eq!(units_per_second(19), Some(10u64.pow(19)));
        assert_eq!(units_per_second(20), None);
        assert_eq!(units_per_second(0x80 | 20), Some(1 << 20));
        assert_eq!(units_per_second(0x80 | 63), Some(1 << 63));
        assert_eq!(units_per_second(0x80 | 64), None);
    }

    #[test]
    fn reader_after_an_error_or_a_cut_returns_none() {
        let mut f = pcap_header(false, false, 1, 65535);
        pcap_record(&mut f, false, 0, 0, &[1; 10], 10);
        let mut r = CaptureReader::new(&f[..f.len() - 1]).unwrap();
        assert!(r.next().is_none());
        assert!(r.next().is_none());
        assert_eq!(r.truncated().map(|e| e.offset), Some(24));
        f[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut r = CaptureReader::new(&f[..]).unwrap();
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    proptest! {
        #[test]
        fn reader_round_trips_pcap_records(
            be: bool,
            nanos: bool,
            recs in prop::collection::vec((any::<u32>(), 0u32..1_000_000, prop::collection::vec(any::<u8>(), 0..80), any::<u32>()), 0..20),
        ) {
            let mut f = pcap_header(be, nanos, 1, 65535);
            for (sec, frac, data, orig) in &recs {
                pcap_record(&mut f, be, *sec, *frac, data, *orig);
            }
            let got = read_all(&f).unwrap();
            let want: Vec<_> = recs.iter().map(|(s, fr, d, o)| {
                let frac_ns = if nanos { u64::from(*fr) } else { u64::from(*fr) * 1000 };
                (u64::from(*s) * 1_000_000_000 + frac_ns, 0, 1, *o, d.clone())
            }).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn reader_round_trips_pcapng_packets(
            be: bool,
            pkts in prop::collection::vec((0u32..2, any::<u64>(), prop::collection::vec(any::<u8>(), 0..80)), 0..20),
        ) {
            let mut f = Vec::new();
            ng_shb(&mut f, be);
            ng_idb(&mut f, be, 1, Some(9), None);
            ng_idb(&mut f, be, 113, None, None);
            for (ifc, ticks, data) in &pkts {
                ng_epb(&mut f, be, *ifc, *ticks, data, data.len() as u32);
            }
            let got = read_all(&f).unwrap();
            let want: Vec<_> = pkts.iter().map(|(i, t, d)| {
                let ns = if *i == 0 { *t } else { t.saturating_mul(1000) };
                (ns, *i, if *i == 0 { 1 } else { 113 }, d.len() as u32, d.clone())
            }).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn any_cut_of_a_capture_reads_exactly_the_whole_records_before_it(
            ng: bool,
            be: bool,
            lens in prop::collection::vec(0usize..70, 1..12),
            cut_at in any::<prop::sample::Index>(),
        ) {
            let mut f = Vec::new();
            let mut ends = Vec::new();
            if ng {
                ng_shb(&mut f, be);
                ng_idb(&mut f, be, 1, None, None);
            } else {
                f = pcap_header(be, false, 1, 65535);
            }
            let first = f.len();
            for (k, n) in lens.iter().enumerate() {
                let data = vec![k as u8; *n];
                if ng {
                    ng_epb(&mut f, be, 0, k as u64, &data, *n as u32);
                } else {
                    pcap_record(&mut f, be, k as u32, 0, &data, *n as u32);
                }
                ends.push(f.len());
            }
            let cut = first + cut_at.index(f.len() - first + 1);
            let (frames, e) = read_cut(&f[..cut]).unwrap();
            let whole = ends.iter().filter(|&&end| end <= cut).count();
            prop_assert_eq!(frames.len(), whole);
            let boundary = cut == first || ends.contains(&cut);
            prop_assert_eq!(e.is_none(), boundary);
            if let Some(e) = e {
                prop_assert_eq!(e.offset, if whole == 0 { first } else { ends[whole - 1] });
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            let _ = read_all(&bytes);
            // Behind valid headers, so the block and record parsers see the noise.
            let mut f = pcap_header(bytes.first().is_some_and(|b| b & 1 == 1), false, 1, 65535);
            f.extend_from_slice(&bytes);
            let _ = read_all(&f);
            let mut f = Vec::new();
            ng_shb(&mut f, false);
            f.extend_from_slice(&bytes);
            let _ = read_all(&f);
        }
    }
}
