//! The embedded INT shim and metadata header of the three versions, and the hop stack they
//! delimit (int-telemetry.md §5 v0.5, §6 v1.0, §7 v2.1).
//!
//! Hop counts come from the shim Length and the per-hop size (HopML, or InsCnt in v0.5), never
//! from RemainingHopCnt / TotalHopCnt (§11: NoviFlow starts RemainingHopCnt at 10).

use super::bytes::{take, u8_at, u16_at};
use super::metadata::{HopLayout, timestamp_bytes};
use crate::error::DecodeError;
use crate::model::{Hop, IntVersion, SourceOnly};
use crate::profile::DeviceProfile;

/// Shim Type of an INT-MD (hop-by-hop) stack in v0.5 / v1.0: the whole first byte
/// (INT v1.0 §"INT shim header for TCP/UDP": Type 8 bits, 1 = hop-by-hop).
pub const SHIM_TYPE_V1: u8 = 1;
/// Shim Type nibble of INT-MD in v2.x (INT v2.1 shim: 1 = INT-MD, 2 = destination, 3 = INT-MX).
pub const SHIM_TYPE_V2_MD: u8 = 1;
/// Shim Type nibble of INT-MX in v2.x.
pub const SHIM_TYPE_V2_MX: u8 = 3;
/// Bytes of the shim in every version.
pub const SHIM_BYTES: usize = 4;
/// INT-MD header bytes: 8 in v0.5 / v1.0, 12 in v2.x (word 2 = DS instruction + flags).
pub const MD_BYTES_V1: usize = 8;
pub const MD_BYTES_V2: usize = 12;
/// Words of a v0.5 stack that are not hops: shim 1 + MD 2 + tail 1 (INT v0.5: Length counts
/// the tail).
pub const V0_5_OVERHEAD_WORDS: usize = 4;
/// Words of a v1.0 stack that are not hops: shim 1 + MD 2; of a v2.x stack: MD 3 (the shim is
/// not counted since v2.0). Both give stack bytes = Length·4 − 12 (§7 note).
pub const V1_0_OVERHEAD_WORDS: usize = 3;
pub const V2_OVERHEAD_WORDS: usize = 3;

/// The version family the first shim byte and the MD version nibble announce, or `None` when
/// the bytes at `at` are not an INT-MD/MX shim we recognise. Needs 8 bytes.
pub(crate) fn recognise(buf: &[u8], at: usize) -> Option<IntVersion> {
    let b = take(buf, at, SHIM_BYTES + 4, "int.shim").ok()?;
    let md_ver = b[4] >> 4;
    match (b[0], b[0] >> 4, md_ver) {
        (SHIM_TYPE_V1, _, 0) => Some(IntVersion::V0_5),
        (SHIM_TYPE_V1, _, 1) => Some(IntVersion::V1_0),
        (_, SHIM_TYPE_V2_MD | SHIM_TYPE_V2_MX, 2) => Some(IntVersion::V2_1),
        _ => None,
    }
}

/// What the stack says about the original packet when INT changed its headers (v2.x NPT).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Restore {
    /// NPT = 1: the original UDP destination port.
    pub dport: Option<u16>,
    /// NPT = 2: the original IP protocol; its L4 header follows the stack at `Stack::end`.
    pub proto: Option<u8>,
}

/// A parsed stack: hops are appended to the caller's vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stack {
    pub version: IntVersion,
    /// Offset just past the INT bytes (v0.5: past the tail).
    pub end: usize,
    pub restore: Restore,
    /// v2.x source-only domain-specific metadata (never hops).
    pub source_only: Option<SourceOnly>,
}

/// Parse the stack of `version` at `at` in `buf`, pushing hops (newest first) onto `hops`.
pub(crate) fn parse(
    buf: &[u8],
    at: usize,
    version: IntVersion,
    profile: &DeviceProfile,
    hops: &mut Vec<Hop>,
) -> Result<Stack, DecodeError> {
    let ts = timestamp_bytes(version, profile.timestamp_bytes);
    match version {
        IntVersion::V0_5 | IntVersion::V1_0 => {
            take(buf, at, SHIM_BYTES + MD_BYTES_V1, "int.md")?;
            let length = usize::from(u8_at(buf, at + 2, "int.shim.length")?);
            let md = at + SHIM_BYTES;
            let per_hop = if version == IntVersion::V0_5 { V0_5_INS_CNT } else { V1_HOP_ML };
            let widths = (ts, profile.l2_port_bytes);
            let hop = md_hops(buf, md, (at + 2, length), version, widths, per_hop)?;
            take(buf, at, length * 4, "int.stack")?;
            push_hops(buf, md + MD_BYTES_V1, hop, profile, hops);
            let (end, restore) = (at + length * 4, Restore::default());
            Ok(Stack { version, end, restore, source_only: None })
        }
        IntVersion::V2_1 => parse_v2(buf, at, ts, profile, hops),
    }
}

/// Where a version's MD header says how many words one hop takes, and which words of the
/// shim Length are not hops.
#[derive(Clone, Copy, Debug)]
struct PerHop {
    /// Byte of the MD header holding the count in its low 5 bits.
    at: usize,
    field: &'static str,
    name: &'static str,
    overhead_words: usize,
    overhead: &'static str,
}

/// v0.5: MD `Ver Rep C E | R:3 InsCnt:5 | MaxHopCnt | TotalHopCnt | ins:16 | rsvd:16`; the
/// shim Length also counts the tail.
const V0_5_INS_CNT: PerHop = PerHop {
    at: 1,
    field: "int.md.ins_cnt",
    name: "InsCnt",
    overhead_words: V0_5_OVERHEAD_WORDS,
    overhead: "≥ 4 words (shim + MD + tail)",
};
/// v1.0: MD `Ver Rep C E M Rsvd:10 HopML:5 RemainingHopCnt:8 | ins:16 | rsvd:16`.
const V1_HOP_ML: PerHop = PerHop {
    at: 2,
    field: "int.md.hop_ml",
    name: "HopML",
    overhead_words: V1_0_OVERHEAD_WORDS,
    overhead: "≥ 3 words (shim + MD)",
};
/// v2.x: MD `Ver D E M Rsvd:12 HopML:5 RemainingHopCnt:8 | ins | DS id | DS ins | DS flags`;
/// the shim is not counted.
const V2_HOP_ML: PerHop = PerHop { overhead: "≥ 3 words (MD header)", ..V1_HOP_ML };

/// v2.x: shim `Type:4 NPT:2 R:2 | Length | NPT-dependent:16`. INT-MX carries no hops.
fn parse_v2(
    buf: &[u8],
    at: usize,
    ts: u8,
    profile: &DeviceProfile,
    hops: &mut Vec<Hop>,
) -> Result<Stack, DecodeError> {
    take(buf, at, SHIM_BYTES + MD_BYTES_V2, "int.md")?;
    let b0 = u8_at(buf, at, "int.shim.type")?;
    let length = usize::from(u8_at(buf, at + 1, "int.shim.length")?);
    let md = at + SHIM_BYTES;
    let body = (md, (at + 1, length));
    let source_only = v2_body(buf, body, b0 >> 4 == SHIM_TYPE_V2_MD, ts, profile, hops)?;
    let restore = match (b0 >> 2) & 0b11 {
        1 => Restore { dport: Some(u16_at(buf, at + 2, "int.shim.udp_dport")?), proto: None },
        2 => Restore { dport: None, proto: Some(u8_at(buf, at + 3, "int.shim.ip_proto")?) },
        _ => Restore::default(),
    };
    Ok(Stack { version: IntVersion::V2_1, end: md + length * 4, restore, source_only })
}

/// The INT-MD (`md_type`) or INT-MX header at `md` and the `length` words (read at byte
/// `length_at`) of header and stack that follow it, whatever carries them (the TCP/UDP shim,
/// or a GRE, VXLAN-GPE or Geneve tunnel's): hops onto `hops`, source-only metadata returned.
pub(crate) fn v2_body(
    buf: &[u8],
    (md, (length_at, length)): (usize, (usize, usize)),
    md_type: bool,
    ts: u8,
    profile: &DeviceProfile,
    hops: &mut Vec<Hop>,
) -> Result<Option<SourceOnly>, DecodeError> {
    take(buf, md, MD_BYTES_V2, "int.md")?;
    if !md_type {
        if length < V2_OVERHEAD_WORDS {
            return Err(DecodeError::new(
                length_at,
                "int.shim.length",
                length as u64,
                V2_HOP_ML.overhead,
            ));
        }
        take(buf, md, length * 4, "int.mx")?;
        if profile.int_mx_hops {
            mx_hops(buf, md, (length_at, length), ts, profile, hops)?;
        }
        return Ok(None);
    }
    let so = source_only_words(buf, md, length, profile);
    let widths = (ts, profile.l2_port_bytes);
    let hop = md_hops(buf, md, (length_at, length - so), IntVersion::V2_1, widths, V2_HOP_ML)?;
    take(buf, md, length * 4, "int.stack")?;
    push_hops(buf, md + MD_BYTES_V2, hop, profile, hops);
    if so == 0 {
        return Ok(None);
    }
    let end = md + length * 4;
    Ok(Some(SourceOnly {
        domain_id: u16_at(buf, md + 6, "int.md.domain_id")?,
        ds_instruction: u16_at(buf, md + 8, "int.md.ds_instruction")?,
        ds_flags: u16_at(buf, md + 10, "int.md.ds_flags")?,
        bytes: take(buf, end - so * 4, so * 4, "int.source_only")?.to_vec(),
    }))
}

/// Hops after an INT-MX header (checked to be in `buf`), where a device puts them although
/// the spec's INT-MX carries none ([`DeviceProfile::int_mx_hops`]). The MX header has no Hop
/// ML, so a hop is what the instruction bitmap's defined bits take.
fn mx_hops(
    buf: &[u8],
    md: usize,
    (length_at, length): (usize, usize),
    ts: u8,
    profile: &DeviceProfile,
    hops: &mut Vec<Hop>,
) -> Result<(), DecodeError> {
    let ins = u16_at(buf, md + 4, "int.mx.instructions")?;
    let layout = HopLayout::with_l2(IntVersion::V2_1, ins, ts, profile.l2_port_bytes);
    let words = layout.defined_bytes / 4;
    let n =
        hop_count(length - V2_OVERHEAD_WORDS, words, length, length_at, "the bitmap's hop size")?;
    push_hops(buf, md + MD_BYTES_V2, Hops { n, len: words * 4, layout }, profile, hops);
    Ok(())
}

/// Domains whose source-only metadata size is published: (Domain Specific ID, DS Instruction
/// bit, words). CableLabs Transparent Security, 0x5453 ("TS"), bit 0: the originating
/// device's 6-byte MAC in 8 bytes (cablelabs/transparent-security docs/int_header/INT_header.md;
/// INT v2.1 §"Example with INT-MD including domain specific source-only metadata").
const KNOWN_SOURCE_ONLY: [(u16, u16, usize); 1] = [(0x5453, 0x8000, 2)];

/// Words of 'source-only' domain-specific metadata at the bottom of a v2.x MD stack of shim
/// Length `length`: none without DS Instruction bits; else the profile's size, else the known
/// domain's, else what is left over after whole hops of Hop ML (INT v2.1: the stack "must
/// always be a multiple of (Hop ML × 4), plus the size of 'source-only' Domain Specific
/// Metadata"). Never more than the stack.
fn source_only_words(buf: &[u8], md: usize, length: usize, profile: &DeviceProfile) -> usize {
    let (Ok(domain), Ok(ds_ins), Ok(hop_ml)) = (
        u16_at(buf, md + 6, "int.md.domain_id"),
        u16_at(buf, md + 8, "int.md.ds_instruction"),
        u8_at(buf, md + 2, "int.md.hop_ml"),
    ) else {
        return 0;
    };
    let stack = length.saturating_sub(V2_OVERHEAD_WORDS);
    if ds_ins == 0 || stack == 0 {
        return 0;
    }
    let known: usize = KNOWN_SOURCE_ONLY
        .iter()
        .filter(|(d, bit, _)| *d == domain && ds_ins & bit != 0)
        .map(|(_, _, words)| words)
        .sum();
    let words = match profile.source_only_words {
        Some(w) => usize::from(w),
        None if known > 0 => known,
        None => stack % usize::from((hop_ml & 0x1F).max(1)),
    };
    words.min(stack)
}

/// The hops a stack holds: count, bytes each, and field layout.
#[derive(Clone, Copy, Debug)]
struct Hops {
    n: usize,
    len: usize,
    layout: HopLayout,
}

/// Hops of an MD stack whose shim Length (`length` words, at byte `length_at`) counts
/// `per_hop.overhead_words` before them.
fn md_hops(
    buf: &[u8],
    md: usize,
    (length_at, length): (usize, usize),
    version: IntVersion,
    (ts, l2): (u8, u8),
    per_hop: PerHop,
) -> Result<Hops, DecodeError> {
    let words = usize::from(u8_at(buf, md + per_hop.at, per_hop.field)? & 0x1F);
    let ins = u16_at(buf, md + 4, "int.md.instructions")?;
    let layout = HopLayout::with_l2(version, ins, ts, l2);
    if words * 4 < layout.defined_bytes {
        return Err(DecodeError::new(
            md + per_hop.at,
            per_hop.field,
            words as u64,
            format!("≥ {} words for instruction bitmap {ins:#06x}", layout.defined_bytes / 4),
        ));
    }
    let stack_words = length.checked_sub(per_hop.overhead_words).ok_or_else(|| {
        DecodeError::new(length_at, "int.shim.length", length as u64, per_hop.overhead)
    })?;
    let n = hop_count(stack_words, words, length, length_at, per_hop.name)?;
    Ok(Hops { n, len: words * 4, layout })
}

/// `stack_words / per_hop`, which must be exact; an empty stack is fine with any per-hop size.
fn hop_count(
    stack_words: usize,
    per_hop: usize,
    length: usize,
    length_at: usize,
    per_hop_name: &str,
) -> Result<usize, DecodeError> {
    if stack_words == 0 {
        return Ok(0);
    }
    if per_hop == 0 || !stack_words.is_multiple_of(per_hop) {
        return Err(DecodeError::new(
            length_at,
            "int.shim.length",
            length as u64,
            format!(
                "{stack_words} stack words to be whole hops of {per_hop_name} = {per_hop} words"
            ),
        ));
    }
    Ok(stack_words / per_hop)
}

/// Decode the hops from `stack` (the caller checked they are in `buf`).
fn push_hops(buf: &[u8], stack: usize, h: Hops, profile: &DeviceProfile, hops: &mut Vec<Hop>) {
    // n ≤ 255 words / 1, and the bytes were checked, so this reservation is input-bounded.
    hops.reserve(h.n);
    let Some(all) = buf.get(stack..stack + h.n * h.len) else { return };
    for hop in all.chunks_exact(h.len.max(1)).take(h.n) {
        hops.push(h.layout.decode(hop, profile.cell_bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overheads_give_stack_bytes_length_times_4_minus_12() {
        // §7 note: v1.0 and v2.1 both have stack bytes = Length·4 − 12; v0.5 adds the tail.
        assert_eq!(V1_0_OVERHEAD_WORDS * 4, SHIM_BYTES + MD_BYTES_V1);
        assert_eq!(V2_OVERHEAD_WORDS * 4, MD_BYTES_V2);
        assert_eq!(V0_5_OVERHEAD_WORDS * 4, SHIM_BYTES + MD_BYTES_V1 + 4);
    }

    #[test]
    fn recognise_needs_shim_type_and_md_version_to_agree() {
        assert_eq!(recognise(&[1, 0, 7, 0, 0x00, 1, 32, 3], 0), Some(IntVersion::V0_5));
        assert_eq!(recognise(&[1, 0, 9, 0, 0x10, 0, 6, 9], 0), Some(IntVersion::V1_0));
        assert_eq!(recognise(&[0x10, 9, 0, 0, 0x20, 0, 6, 9], 0), Some(IntVersion::V2_1));
        assert_eq!(recognise(&[0x30, 3, 0, 0, 0x20, 0, 0, 0], 0), Some(IntVersion::V2_1));
        // A v1.0 shim with a v2 MD header, a destination-type shim, and too few bytes.
        assert_eq!(recognise(&[1, 0, 9, 0, 0x20, 0, 6, 9], 0), None);
        assert_eq!(recognise(&[2, 0, 9, 0, 0x10, 0, 6, 9], 0), None);
        assert_eq!(recognise(&[1, 0, 9, 0, 0x10], 0), None);
    }

    #[test]
    fn v1_0_empty_stack_with_zero_hop_ml_is_zero_hops() {
        let b = [1, 0, 3, 0, 0x10, 0, 0, 10, 0, 0, 0, 0];
        let mut hops = Vec::new();
        let s = parse(&b, 0, IntVersion::V1_0, &DeviceProfile::spec(), &mut hops).unwrap();
        assert_eq!((s.end, hops.len()), (12, 0));
    }
}
