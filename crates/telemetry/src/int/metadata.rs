//! The instruction bitmap: which per-hop fields a hop carries, where each sits inside the hop,
//! and how each maps onto [`Hop`] (int-telemetry.md §5, §6, §7, §8).
//!
//! Fields appear in bitmap order (bit 0 = MSB first). A whole metadata item of all ones (4 or
//! 8 bytes of 0xFF) means "not available" and decodes to `None` (INT v2.1 §"INT-MD Metadata
//! Header Format": "a special all-ones reserved value ... (4 or 8 bytes of 0xFF depending on
//! metadata length)"). A sub-field of all ones inside a word that is not all ones is a value:
//! a 24-bit occupancy of 0xFFFFFF beside queue id 5 is 16,777,215 units, as AmLight's own
//! collector tests send it (amlight/int_collector `tests/test_int_collector.py`
//! `test_multiple_ten_metadata`, `queue_occ=16777215`).

use crate::model::{Hop, IntVersion};

/// Bit 0: switch (node) id, 4 B. INT v0.5 §"Instruction bitmap", v1.0 / v2.1 bitmap tables.
pub const INS_SWITCH_ID: u16 = 0x8000;
/// Bit 1: level-1 ingress port (16) + egress port (16), 4 B.
pub const INS_L1_PORTS: u16 = 0x4000;
/// Bit 2: hop latency, 4 B.
pub const INS_HOP_LATENCY: u16 = 0x2000;
/// Bit 3: queue id (8) + queue occupancy (24), 4 B.
pub const INS_QUEUE: u16 = 0x1000;
/// Bit 4: ingress timestamp: 4 B in v0.5 / v1.0, 8 B in v2.x.
pub const INS_INGRESS_TS: u16 = 0x0800;
/// Bit 5: egress timestamp: 4 B in v0.5 / v1.0, 8 B in v2.x.
pub const INS_EGRESS_TS: u16 = 0x0400;
/// Bit 6: v0.5 queue id (8) + congestion status (24), 4 B; v1.0 / v2.1 level-2 ingress
/// port (32) + egress port (32), 8 B.
pub const INS_BIT6: u16 = 0x0200;
/// Bit 7: egress port tx utilization, 4 B.
pub const INS_TX_UTIL: u16 = 0x0100;
/// Bit 8 in v2.1: buffer id (8) + buffer occupancy (24), 4 B (reserved in v0.5 / v1.0).
pub const INS_BUFFER: u16 = 0x0080;
/// Bit 15 in v1.0 / v2.1: checksum complement, 4 B.
pub const INS_CHECKSUM: u16 = 0x0001;
/// What NoviFlow switches always request: bits 0–5, 6 words per hop with 4-byte timestamps
/// (int-telemetry.md §9.2; amlight/int_collector `BPFCollector.c`).
pub const NOVIFLOW_INSTRUCTIONS: u16 = 0xFC00;

/// One field we decode into [`Hop`]; bits whose meaning we do not keep are only skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    SwitchId,
    L1Ports,
    HopLatency,
    Queue,
    IngressTs,
    EgressTs,
    /// v0.5 bit 6, used for the queue id only when bit 3 is absent.
    QueueCongestion,
    /// v1.0 / v2.1 bit 6, used for the ports only when bit 1 is absent.
    L2Ports,
}

/// Where each kept field of one hop sits, computed once per stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HopLayout {
    fields: [(Field, u8); 8],
    n: usize,
    ts_bytes: u8,
    l2_bytes: u8,
    /// Bytes the defined bits of the bitmap occupy; a hop shorter than this disagrees with
    /// the bitmap.
    pub(crate) defined_bytes: usize,
}

/// Size in bytes of bitmap bit `bit` (0 = MSB), or `None` for a reserved bit.
fn bit_size(version: IntVersion, bit: u32, ts_bytes: u8) -> Option<usize> {
    bit_size_l2(version, bit, ts_bytes, 8)
}

/// [`bit_size`] with level-2 port ids of `l2_bytes` in all (8 as specified, 4 on GEANT).
fn bit_size_l2(version: IntVersion, bit: u32, ts_bytes: u8, l2_bytes: u8) -> Option<usize> {
    let ts = usize::from(ts_bytes);
    match (version, bit) {
        (_, 0..=3) | (_, 7) => Some(4),
        (_, 4 | 5) => Some(ts),
        (IntVersion::V0_5, 6) => Some(4),
        (_, 6) => Some(usize::from(l2_bytes)),
        (IntVersion::V2_1, 8) => Some(4),
        (IntVersion::V1_0 | IntVersion::V2_1, 15) => Some(4),
        _ => None,
    }
}

/// Timestamp width: 8 B in INT v2.x whatever the profile says (INT v2.1 bitmap), else the
/// profile's (4 B as specified, 8 B on GEANT's v1.0 stacks, int-telemetry.md §11).
pub(crate) fn timestamp_bytes(version: IntVersion, profile_bytes: u8) -> u8 {
    match version {
        IntVersion::V2_1 => 8,
        _ if profile_bytes == 8 => 8,
        _ => 4,
    }
}

impl HopLayout {
    #[cfg(test)]
    pub(crate) fn new(version: IntVersion, instructions: u16, ts_bytes: u8) -> Self {
        Self::with_l2(version, instructions, ts_bytes, 8)
    }

    /// The layout when a device sends level-2 port ids (bit 6, v1.0 / v2.1) in `l2_bytes`:
    /// 8 as specified (two 32-bit ids), 4 as GEANT's collector reads them (one word,
    /// `lv2_in_e_port_ids`, GEANT-DataPlaneProgramming/int-collector `BPFCollector.c`).
    pub(crate) fn with_l2(
        version: IntVersion,
        instructions: u16,
        ts_bytes: u8,
        l2_bytes: u8,
    ) -> Self {
        let l2_bytes = if l2_bytes == 4 { 4 } else { 8 };
        let mut layout = HopLayout {
            fields: [(Field::SwitchId, 0); 8],
            n: 0,
            ts_bytes,
            l2_bytes,
            defined_bytes: 0,
        };
        let mut at = 0usize;
        for bit in 0..16u32 {
            if instructions & (0x8000 >> bit) == 0 {
                continue;
            }
            let field = match bit {
                0 => Some(Field::SwitchId),
                1 => Some(Field::L1Ports),
                2 => Some(Field::HopLatency),
                3 => Some(Field::Queue),
                4 => Some(Field::IngressTs),
                5 => Some(Field::EgressTs),
                6 if version == IntVersion::V0_5 && instructions & INS_QUEUE == 0 => {
                    Some(Field::QueueCongestion)
                }
                6 if version != IntVersion::V0_5 && instructions & INS_L1_PORTS == 0 => {
                    Some(Field::L2Ports)
                }
                _ => None,
            };
            if let Some(f) = field {
                // `at` ≤ 6 × 8 here: bits 0–6 are the only ones kept.
                layout.fields[layout.n] = (f, at as u8);
                layout.n += 1;
            }
            // Reserved bits have no defined size: nothing we read follows them (bits 0–6
            // precede every reserved bit), and HopML / InsCnt give the hop's true length.
            at += bit_size_l2(version, bit, ts_bytes, l2_bytes).unwrap_or(0);
        }
        layout.defined_bytes = at;
        layout
    }

    /// Decode one hop from `hop` (length-checked by the caller: ≥ `defined_bytes`).
    #[inline]
    pub(crate) fn decode(&self, hop: &[u8], cell_bytes: u32) -> Hop {
        let mut h = Hop::default();
        let ts = usize::from(self.ts_bytes);
        for &(field, at) in &self.fields[..self.n] {
            let at = usize::from(at);
            let word = |len: usize| hop.get(at..at + len).map_or(u64::MAX, super::bytes::be);
            match field {
                Field::SwitchId => h.switch_id = avail32(word(4)),
                Field::L1Ports => {
                    let w = avail(word(4), 32);
                    h.ingress_port = w.map(|w| (w >> 16) as u32);
                    h.egress_port = w.map(|w| (w & 0xFFFF) as u32);
                }
                Field::HopLatency => h.hop_latency_ns = avail32(word(4)),
                Field::Queue | Field::QueueCongestion => {
                    let w = avail(word(4), 32);
                    h.queue_id = w.map(|w| (w >> 24) as u8);
                    if field == Field::Queue {
                        h.queue_occupancy_bytes =
                            w.map(|w| (w & 0xFF_FFFF) * u64::from(cell_bytes));
                    }
                }
                Field::IngressTs => h.ingress_ts = avail(word(ts), ts as u32 * 8),
                Field::EgressTs => h.egress_ts = avail(word(ts), ts as u32 * 8),
                Field::L2Ports if self.l2_bytes == 4 => {
                    // One word: ingress id (16) | egress id (16), as GEANT pairs its ids.
                    let w = avail(word(4), 32);
                    h.ingress_port = w.map(|w| (w >> 16) as u32);
                    h.egress_port = w.map(|w| (w & 0xFFFF) as u32);
                }
                Field::L2Ports => {
                    let w = word(8);
                    h.ingress_port = avail32(w >> 32);
                    h.egress_port = avail32(w & 0xFFFF_FFFF);
                }
            }
        }
        h
    }
}

/// `None` when `v`, a whole metadata item of `bits` (32 or 64), is all ones ("not available").
#[inline]
fn avail(v: u64, bits: u32) -> Option<u64> {
    let ones = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (v != ones).then_some(v)
}

#[inline]
fn avail32(v: u64) -> Option<u32> {
    avail(v, 32).map(|v| v as u32)
}

/// Bytes one hop occupies when we encode `instructions`: defined sizes, and 4 B (all ones)
/// for each reserved bit, the width of every other bitmap field.
pub fn hop_bytes(version: IntVersion, instructions: u16, ts_bytes: u8) -> usize {
    (0..16u32)
        .filter(|bit| instructions & (0x8000 >> bit) != 0)
        .map(|bit| bit_size(version, bit, ts_bytes).unwrap_or(4))
        .sum()
}

/// Append one hop in bitmap order. Values are cut to their field's width as a device would;
/// `None` and bits [`Hop`] has no value for are written as all ones. A word shared by two
/// fields is all ones only when both are `None` (a device that has neither); one `None` beside
/// a value is written as that sub-field's all ones, which reads back as a value. Occupancy is
/// rounded up to whole cells and saturates at 0xFFFFFF (below it when the queue id is 0xFF, so
/// the word never becomes the marker).
pub fn encode_hop(
    version: IntVersion,
    instructions: u16,
    ts_bytes: u8,
    cell_bytes: u32,
    hop: &Hop,
    out: &mut Vec<u8>,
) {
    let ones = |width: usize, out: &mut Vec<u8>| out.extend(std::iter::repeat_n(0xFF, width));
    let put = |v: u64, width: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
    };
    let or_ones = |v: Option<u64>, bits: u32| v.map_or(u64::MAX, |v| v & mask(bits));
    for bit in 0..16u32 {
        if instructions & (0x8000 >> bit) == 0 {
            continue;
        }
        let size = bit_size(version, bit, ts_bytes).unwrap_or(4);
        let ports = |a: Option<u32>, b: Option<u32>, half: u32| {
            (or_ones(a.map(u64::from), half) & mask(half)) << half
                | (or_ones(b.map(u64::from), half) & mask(half))
        };
        match bit {
            0 => put(or_ones(hop.switch_id.map(u64::from), 32), 4, out),
            1 => put(ports(hop.ingress_port, hop.egress_port, 16), 4, out),
            2 => put(or_ones(hop.hop_latency_ns.map(u64::from), 32), 4, out),
            3 => match hop.queue_occupancy_bytes {
                None => ones(4, out),
                Some(b) => {
                    let qid = or_ones(hop.queue_id.map(u64::from), 8) & 0xFF;
                    let top = if qid == 0xFF { 0xFF_FFFE } else { 0xFF_FFFF };
                    let cells = b.div_ceil(u64::from(cell_bytes.max(1))).min(top);
                    put(qid << 24 | cells, 4, out);
                }
            },
            4 => put(or_ones(hop.ingress_ts, size as u32 * 8), size, out),
            5 => put(or_ones(hop.egress_ts, size as u32 * 8), size, out),
            6 if version == IntVersion::V0_5 => match hop.queue_id {
                // Congestion status is not kept: 0 beside a queue id, so the word is a value.
                Some(qid) => put(u64::from(qid) << 24, 4, out),
                None => ones(4, out),
            },
            6 => put(ports(hop.ingress_port, hop.egress_port, 32), 8, out),
            _ => ones(size, out),
        }
    }
}

#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_masks_are_msb_first() {
        // Bit n of the bitmap is mask 0x8000 >> n (int-telemetry.md §6 table).
        let masks = [
            INS_SWITCH_ID,
            INS_L1_PORTS,
            INS_HOP_LATENCY,
            INS_QUEUE,
            INS_INGRESS_TS,
            INS_EGRESS_TS,
            INS_BIT6,
            INS_TX_UTIL,
            INS_BUFFER,
        ];
        for (bit, m) in masks.iter().enumerate() {
            assert_eq!(*m, 0x8000 >> bit);
        }
        assert_eq!(INS_CHECKSUM, 0x8000 >> 15);
        assert_eq!(
            NOVIFLOW_INSTRUCTIONS,
            INS_SWITCH_ID
                | INS_L1_PORTS
                | INS_HOP_LATENCY
                | INS_QUEUE
                | INS_INGRESS_TS
                | INS_EGRESS_TS
        );
    }

    #[test]
    fn noviflow_hop_is_six_words() {
        assert_eq!(hop_bytes(IntVersion::V1_0, NOVIFLOW_INSTRUCTIONS, 4), 24);
        assert_eq!(HopLayout::new(IntVersion::V1_0, NOVIFLOW_INSTRUCTIONS, 4).defined_bytes, 24);
    }

    #[test]
    fn v2_1_timestamps_are_eight_bytes_whatever_the_profile() {
        assert_eq!(timestamp_bytes(IntVersion::V2_1, 4), 8);
        assert_eq!(timestamp_bytes(IntVersion::V1_0, 4), 4);
        assert_eq!(timestamp_bytes(IntVersion::V1_0, 8), 8);
        assert_eq!(hop_bytes(IntVersion::V2_1, NOVIFLOW_INSTRUCTIONS, 8), 32);
    }

    #[test]
    fn bit6_is_four_bytes_in_v0_5_and_eight_later() {
        assert_eq!(hop_bytes(IntVersion::V0_5, INS_BIT6, 4), 4);
        assert_eq!(hop_bytes(IntVersion::V1_0, INS_BIT6, 4), 8);
        assert_eq!(hop_bytes(IntVersion::V2_1, INS_BIT6 | INS_BUFFER, 8), 12);
    }

    #[test]
    fn reserved_bits_add_no_defined_bytes_but_encode_as_words() {
        // v1.0 bits 8–14 are reserved: the parser cannot size them, the encoder pads 4 B each.
        let ins = INS_SWITCH_ID | 0x0080 | 0x0002;
        assert_eq!(HopLayout::new(IntVersion::V1_0, ins, 4).defined_bytes, 4);
        assert_eq!(hop_bytes(IntVersion::V1_0, ins, 4), 12);
    }

    #[test]
    fn all_ones_fields_decode_to_none() {
        let l = HopLayout::new(IntVersion::V1_0, NOVIFLOW_INSTRUCTIONS, 4);
        let h = l.decode(&[0xFF; 24], 80);
        assert_eq!(h, Hop::default());
    }

    #[test]
    fn only_a_whole_all_ones_word_is_not_available() {
        let l = HopLayout::new(IntVersion::V1_0, INS_L1_PORTS | INS_QUEUE, 4);
        // Ports 0xFFFF → 3 and queue 5 × 0xFFFFFF cells: sub-fields of all ones are values.
        let h = l.decode(&[0xFF, 0xFF, 0, 3, 0x05, 0xFF, 0xFF, 0xFF], 80);
        assert_eq!((h.ingress_port, h.egress_port), (Some(0xFFFF), Some(3)));
        assert_eq!((h.queue_id, h.queue_occupancy_bytes), (Some(5), Some(0xFF_FFFF * 80)));
        // Whole words of all ones: neither field of the word is available.
        let h = l.decode(&[0xFF; 8], 80);
        assert_eq!((h.ingress_port, h.egress_port, h.queue_id), (None, None, None));
        assert_eq!(h.queue_occupancy_bytes, None);
    }

    #[test]
    fn encode_never_writes_the_marker_for_a_value() {
        let hop = |qid, bytes| Hop {
            queue_id: Some(qid),
            queue_occupancy_bytes: Some(bytes),
            ..Hop::default()
        };
        let mut out = Vec::new();
        encode_hop(IntVersion::V1_0, INS_QUEUE, 4, 1, &hop(5, u64::MAX), &mut out);
        encode_hop(IntVersion::V1_0, INS_QUEUE, 4, 1, &hop(0xFF, u64::MAX), &mut out);
        encode_hop(IntVersion::V1_0, INS_QUEUE, 4, 1, &Hop::default(), &mut out);
        assert_eq!(out, [5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn occupancy_is_cells_times_cell_bytes() {
        let l = HopLayout::new(IntVersion::V1_0, INS_QUEUE, 4);
        let h = l.decode(&[0x03, 0x00, 0x00, 0x0A], 80);
        assert_eq!((h.queue_id, h.queue_occupancy_bytes), (Some(3), Some(800)));
    }

    #[test]
    fn encode_rounds_occupancy_up_to_whole_cells() {
        let hop = Hop { queue_id: Some(1), queue_occupancy_bytes: Some(81), ..Hop::default() };
        let mut out = Vec::new();
        encode_hop(IntVersion::V1_0, INS_QUEUE, 4, 80, &hop, &mut out);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x02]);
    }

    #[test]
    fn l2_ports_fill_in_only_without_l1_ports() {
        let l = HopLayout::new(IntVersion::V1_0, INS_BIT6, 4);
        let h = l.decode(&[0, 0, 1, 0, 0, 0, 0, 7], 1);
        assert_eq!((h.ingress_port, h.egress_port), (Some(256), Some(7)));
        let l = HopLayout::new(IntVersion::V1_0, INS_L1_PORTS | INS_BIT6, 4);
        let h = l.decode(&[0, 1, 0, 2, 0, 0, 1, 0, 0, 0, 0, 7], 1);
        assert_eq!((h.ingress_port, h.egress_port), (Some(1), Some(2)));
    }
}
