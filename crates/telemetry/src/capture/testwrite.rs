//! Test-only writers of pcap and pcapng bytes, from the layouts in draft-ietf-opsawg-pcap §4–5
//! and draft-ietf-opsawg-pcapng §4, so the reader is checked against files built by hand.

use super::packet::TcpFlags;

fn u16b(out: &mut Vec<u8>, be: bool, v: u16) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn u32b(out: &mut Vec<u8>, be: bool, v: u32) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

/// A legacy pcap file header.
pub fn pcap_header(be: bool, nanos: bool, linktype: u16, snaplen: u32) -> Vec<u8> {
    let mut out = Vec::new();
    u32b(&mut out, be, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    u16b(&mut out, be, 2);
    u16b(&mut out, be, 4);
    u32b(&mut out, be, 0);
    u32b(&mut out, be, 0);
    u32b(&mut out, be, snaplen);
    u32b(&mut out, be, u32::from(linktype));
    out
}

/// A legacy pcap record; `frac` is µs or ns as the header says.
pub fn pcap_record(out: &mut Vec<u8>, be: bool, sec: u32, frac: u32, data: &[u8], orig: u32) {
    u32b(out, be, sec);
    u32b(out, be, frac);
    u32b(out, be, data.len() as u32);
    u32b(out, be, orig);
    out.extend_from_slice(data);
}

/// One pcapng block: type, total length, body padded to 4 bytes, total length.
pub fn ng_block(out: &mut Vec<u8>, be: bool, block_type: u32, body: &[u8]) {
    let padded = body.len().div_ceil(4) * 4;
    let total = (12 + padded) as u32;
    u32b(out, be, block_type);
    u32b(out, be, total);
    out.extend_from_slice(body);
    out.resize(out.len() + padded - body.len(), 0);
    u32b(out, be, total);
}

/// A Section Header Block, version 1.0, section length unknown (-1).
pub fn ng_shb(out: &mut Vec<u8>, be: bool) {
    let mut body = Vec::new();
    u32b(&mut body, be, 0x1a2b_3c4d);
    u16b(&mut body, be, 1);
    u16b(&mut body, be, 0);
    body.extend_from_slice(&[0xff; 8]);
    ng_block(out, be, 0x0a0d_0d0a, &body);
}

/// An Interface Description Block with optional `if_tsresol` (code 9) and `if_tsoffset`
/// (code 14).
pub fn ng_idb(
    out: &mut Vec<u8>,
    be: bool,
    linktype: u16,
    tsresol: Option<u8>,
    tsoffset: Option<i64>,
) {
    let mut body = Vec::new();
    u16b(&mut body, be, linktype);
    u16b(&mut body, be, 0);
    u32b(&mut body, be, 262_144);
    if let Some(r) = tsresol {
        u16b(&mut body, be, 9);
        u16b(&mut body, be, 1);
        body.extend_from_slice(&[r, 0, 0, 0]);
    }
    if let Some(o) = tsoffset {
        u16b(&mut body, be, 14);
        u16b(&mut body, be, 8);
        body.extend_from_slice(&if be { o.to_be_bytes() } else { o.to_le_bytes() });
    }
    if tsresol.is_some() || tsoffset.is_some() {
        body.extend_from_slice(&[0; 4]); // opt_endofopt
    }
    ng_block(out, be, 1, &body);
}

/// An Enhanced Packet Block.
pub fn ng_epb(out: &mut Vec<u8>, be: bool, if_id: u32, ticks: u64, data: &[u8], orig: u32) {
    let mut body = Vec::new();
    u32b(&mut body, be, if_id);
    u32b(&mut body, be, (ticks >> 32) as u32);
    u32b(&mut body, be, ticks as u32);
    u32b(&mut body, be, data.len() as u32);
    u32b(&mut body, be, orig);
    body.extend_from_slice(data);
    ng_block(out, be, 6, &body);
}

/// An Ethernet + IPv4 + TCP frame with the given identification and TCP fields.
#[allow(clippy::too_many_arguments)]
pub fn tcp_frame(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    ip_id: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64)
        .tcp(sport, dport, seq, window);
    if flags & TcpFlags::ACK != 0 {
        b = b.ack(ack);
    }
    if flags & TcpFlags::SYN != 0 {
        b = b.syn();
    }
    if flags & TcpFlags::FIN != 0 {
        b = b.fin();
    }
    if flags & TcpFlags::RST != 0 {
        b = b.rst();
    }
    let mut out = Vec::new();
    b.write(&mut out, payload).expect("a valid test packet");
    out[18..20].copy_from_slice(&ip_id.to_be_bytes());
    out
}
