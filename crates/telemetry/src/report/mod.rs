//! Telemetry Report headers: TR v0.5 (spec and fabric-tna packing), TR v1.0 and TR v2.0
//! (int-telemetry.md §1–§4). A report header says who reported, its sequence number, the
//! reporting switch's own metadata about the packet ([`ReportHeader::local`]) and where the
//! reported packet starts ([`ReportHeader::inner`]); the packet itself, with any embedded INT
//! stack, is left to [`crate::int`].
//!
//! Dispatch is on the version nibble of the UDP payload, never on the UDP port (§10, §16.1).
//! What the wire does not say comes from the [`DeviceProfile`]: the occupancy unit
//! (`cell_bytes`), the TR v1.0 flag layout (`flag_layout`, §3.3) and, by its name, which TR v0.5
//! packing the device uses ([`V05Layout::for_profile`], §2.3).

mod reader;
#[cfg(test)]
mod roundtrip;
pub mod v0_5;
pub mod v1_0;
pub mod v2_0;

use crate::error::DecodeError;
use crate::model::{Hop, InnerKind, ReportFlags, ReportVersion};
use crate::profile::{DeviceProfile, TrV1Layout};
use std::ops::Range;

pub use v0_5::V05Layout;

/// One report header as decoded from the wire, before the reported packet is parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportHeader {
    pub version: ReportVersion,
    /// TR v1.0 Switch id, TR v2.0 Node ID, TR v0.5 the drop/switch-local header's switch id.
    pub switch_id: Option<u32>,
    /// 6 bits on every version.
    pub hw_id: u8,
    /// 32 bits in TR v0.5/v1.0, 22 bits in TR v2.0 (one group's sequence number, shared by its
    /// coalesced reports).
    pub seq: u32,
    /// Nanoseconds of the device clock: 32 bits in TR v0.5/v1.0, 64 bits in TR v2.0 (RepMdBits
    /// bit 4, so `None` when the report leaves it out).
    pub ingress_ts: Option<u64>,
    pub flags: ReportFlags,
    pub drop_reason: Option<u8>,
    /// The reporting switch's own metadata about the packet, `Some` exactly when the report
    /// carries any (TR v0.5 drop/switch-local header, TR v1.0/v2.0 RepMdBits words). Its
    /// `switch_id` and `ingress_ts` repeat the header's so the hop stands alone; occupancy is
    /// already in bytes.
    pub local: Option<Hop>,
    /// What follows the header and its byte range in the payload handed to [`parse_reports`].
    pub inner: Option<(InnerKind, Range<usize>)>,
}

/// The TR v0.5 version nibble. The v0.5 text defines none; every implementation sends 0
/// (int-telemetry.md §1, §2.1).
pub const VERSION_V0_5: u8 = 0;
/// TR v1.0 `Ver = 1` (telemetry_report_v1_0.pdf §3, int-telemetry.md §3.1).
pub const VERSION_V1_0: u8 = 1;
/// TR v2.0 `Ver = 2` (telemetry_report_v2_0.pdf, group header; int-telemetry.md §4.1).
pub const VERSION_V2_0: u8 = 2;

/// Every report header in a report UDP payload: one for TR v0.5 and v1.0, one per coalesced
/// individual report for TR v2.0.
pub fn parse_reports(
    payload: &[u8],
    profile: &DeviceProfile,
) -> Result<Vec<ReportHeader>, DecodeError> {
    let mut out = Vec::new();
    parse_reports_into(payload, profile, &mut out)?;
    Ok(out)
}

/// [`parse_reports`] into a caller's vector (cleared first), so a collector loop reuses one
/// allocation for every packet.
pub fn parse_reports_into(
    payload: &[u8],
    profile: &DeviceProfile,
    out: &mut Vec<ReportHeader>,
) -> Result<(), DecodeError> {
    out.clear();
    let Some(&first) = payload.first() else {
        return Err(DecodeError::truncated(0, "report.version", 0, 1));
    };
    match first >> 4 {
        VERSION_V0_5 => out.push(v0_5::parse(payload, profile, V05Layout::for_profile(profile))?),
        // Ver = 1 over other layouts: early ONOS and AmLight generators send TR v0.5's, bmv2
        // INT-MX TR v2.0's; only the device profile can tell (`tr_v1_layout`).
        VERSION_V1_0 => match profile.tr_v1_layout {
            TrV1Layout::V1_0 => out.push(v1_0::parse(payload, profile)?),
            TrV1Layout::V0_5 => {
                out.push(v0_5::parse(payload, profile, V05Layout::for_profile(profile))?)
            }
            TrV1Layout::V2_0 => v2_0::parse(payload, profile, out)?,
        },
        VERSION_V2_0 => v2_0::parse(payload, profile, out)?,
        nibble => {
            return Err(DecodeError::new(
                0,
                "report.version",
                u64::from(nibble),
                "0 (TR v0.5), 1 (TR v1.0) or 2 (TR v2.0)",
            ));
        }
    }
    Ok(())
}

/// Appends one report packet's UDP payload to `out`: `h` followed by `inner` (the reported
/// packet, of kind `h.inner`'s). The version, and for TR v0.5 the packing, come from
/// `h.version`; the occupancy unit and the TR v1.0 flag layout from `profile`. A TR v2.0 packet
/// holds this one report; use [`v2_0::encode_group_header`] and [`v2_0::encode_individual`] to
/// coalesce several. Values wider than their wire field keep their low bits; `h.inner`'s range
/// is ignored (the encoder places `inner` right after the header).
pub fn encode_report(h: &ReportHeader, inner: &[u8], profile: &DeviceProfile, out: &mut Vec<u8>) {
    match h.version {
        ReportVersion::V0_5 => v0_5::encode(h, inner, profile, V05Layout::Spec, out),
        ReportVersion::V0_5FabricTna => v0_5::encode(h, inner, profile, V05Layout::FabricTna, out),
        ReportVersion::V1_0 => v1_0::encode(h, inner, profile, out),
        ReportVersion::V2_0 => {
            v2_0::encode_group_header(h.hw_id, h.seq, h.switch_id.unwrap_or(0), out);
            v2_0::encode_individual(h, inner, profile, out);
        }
    }
}

/// Queue occupancy in bytes from the device's units.
#[inline]
fn occupancy_bytes(units: u32, profile: &DeviceProfile) -> u64 {
    u64::from(units) * u64::from(profile.cell_bytes)
}

/// Queue occupancy in the device's units, for encoding (a profile with `cell_bytes` 0 is
/// treated as bytes rather than dividing by zero).
#[inline]
fn occupancy_units(bytes: u64, profile: &DeviceProfile) -> u64 {
    bytes / u64::from(profile.cell_bytes.max(1))
}

/// The D/Q/F bits from three single-bit positions of `w` (the bit's shift from the LSB).
#[inline]
fn flags_at(w: u32, d: u32, q: u32, f: u32) -> ReportFlags {
    ReportFlags {
        dropped: (w >> d) & 1 == 1,
        congested: (w >> q) & 1 == 1,
        tracked: (w >> f) & 1 == 1,
    }
}

/// The inverse of [`flags_at`].
#[inline]
fn flag_bits(flags: ReportFlags, d: u32, q: u32, f: u32) -> u32 {
    (u32::from(flags.dropped) << d)
        | (u32::from(flags.congested) << q)
        | (u32::from(flags.tracked) << f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_empty_payload_is_truncated_at_zero() {
        let e = parse_reports(&[], &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (0, "report.version", 0));
    }

    #[test]
    fn dispatch_unknown_nibble_is_named() {
        let e = parse_reports(&[0x30, 0, 0, 0], &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (0, "report.version", 3));
        let e = parse_reports(&[0xF0], &DeviceProfile::spec()).unwrap_err();
        assert_eq!(e.value, 15);
    }

    #[test]
    fn dispatch_nibble_1_follows_the_profiles_layout() {
        // Ver 1 | hw_id 1 | seq 5, node 9, then an Inner Only report with no packet: TR v2.0
        // headers under nibble 1, as bmv2 INT-MX sends them.
        let bytes = [0x10, 0x40, 0x00, 0x05, 0, 0, 0, 9, 0x00, 0x00, 0x00, 0x00];
        let v2 = DeviceProfile { tr_v1_layout: TrV1Layout::V2_0, ..DeviceProfile::spec() };
        let h = &parse_reports(&bytes, &v2).unwrap()[0];
        assert_eq!((h.version, h.switch_id, h.hw_id, h.seq), (ReportVersion::V2_0, Some(9), 1, 5));
        // Read as TR v1.0, its 16-byte header is cut short.
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.field, e.offset), ("tr_v1_0.ingress_ts", 12));
        let v05 = DeviceProfile { tr_v1_layout: TrV1Layout::V0_5, ..DeviceProfile::spec() };
        assert_eq!(parse_reports(&bytes, &v05).unwrap()[0].version, ReportVersion::V0_5);
    }

    #[test]
    fn dispatch_version_nibbles_are_the_specs() {
        assert_eq!((VERSION_V0_5, VERSION_V1_0, VERSION_V2_0), (0, 1, 2));
    }

    #[test]
    fn into_reuses_and_clears_the_vector() {
        let p = DeviceProfile::spec();
        let mut out = Vec::with_capacity(4);
        // TR v0.5, NProto 0, nothing after the 12-byte header.
        let bytes = [0x00, 0x20, 0x00, 0x01, 0, 0, 0, 7, 0, 0, 0, 9];
        parse_reports_into(&bytes, &p, &mut out).unwrap();
        parse_reports_into(&bytes, &p, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 7);
    }

    #[test]
    fn occupancy_cells_scale_by_the_profile() {
        let p = DeviceProfile::noviflow();
        assert_eq!(occupancy_bytes(111, &p), 8880);
        assert_eq!(occupancy_units(8880, &p), 111);
        assert_eq!(occupancy_bytes(0xFF_FFFF, &p), 0xFF_FFFF * 80);
    }
}
