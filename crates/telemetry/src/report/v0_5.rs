//! Telemetry Report v0.5 (int-telemetry.md §2): a 12-byte fixed header, then by NProto a 12-byte
//! drop header or a 16-byte switch-local header, then the reported Ethernet frame.
//!
//! stratum/fabric-tna packs the drop and local headers into the same sizes with narrower fields
//! (§2.3: 9-bit ports, 5-bit queue id, 19-bit occupancy, each behind zero padding), so the two
//! packings share one walk and differ only in the masks of [`V05Layout`].

use super::reader::Reader;
use super::{ReportHeader, flag_bits, flags_at, occupancy_bytes, occupancy_units};
use crate::error::DecodeError;
use crate::model::{Hop, InnerKind, ReportVersion};
use crate::profile::DeviceProfile;

/// Fixed header size (TR v0.5 §"Telemetry Report Header", int-telemetry.md §2.1).
pub const FIXED_BYTES: usize = 12;
/// Drop Report header size, the same in the spec and fabric-tna (§2.2, §2.3).
pub const DROP_BYTES: usize = 12;
/// Switch Local Report header size, the same in the spec and fabric-tna (§2.2, §2.3).
pub const LOCAL_BYTES: usize = 16;

/// NProto values (TR v0.5 §2.1; fabric-tna `define.p4` `NPROTO_*`).
pub const NPROTO_ETHERNET: u8 = 0;
pub const NPROTO_DROP: u8 = 1;
pub const NPROTO_LOCAL: u8 = 2;

/// D, Q, F are bits 8, 9, 10 of word 0 (MSB = bit 0), i.e. shifts 23, 22, 21 from the LSB
/// (int-telemetry.md §2.1); fabric-tna's 3-bit `dqf` occupies the same bits (§2.3).
const FLAG_SHIFTS: (u32, u32, u32) = (23, 22, 21);

/// The profile name under which a device packs TR v0.5 the fabric-tna way (§11, §16.1).
pub const FABRIC_TNA_PROFILE: &str = "fabric-tna";

/// How the TR v0.5 drop and switch-local headers are packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V05Layout {
    /// The TR v0.5 spec: 16-bit ports, 8-bit queue id, 24-bit occupancy.
    Spec,
    /// stratum/fabric-tna `p4src/shared/header.p4`: `pad:7 port:9`, `pad:3 queue_id:5`,
    /// `pad:5 queue_occupancy:19` (int-telemetry.md §2.3).
    FabricTna,
}

impl V05Layout {
    /// [`DeviceProfile`] carries no TR v0.5 packing field yet, so the profile's name selects
    /// it: [`FABRIC_TNA_PROFILE`] means fabric-tna, anything else the spec.
    pub fn for_profile(profile: &DeviceProfile) -> Self {
        if profile.name == FABRIC_TNA_PROFILE { V05Layout::FabricTna } else { V05Layout::Spec }
    }

    /// Masks for (port, queue id, queue occupancy).
    fn masks(self) -> (u16, u8, u32) {
        match self {
            V05Layout::Spec => (0xFFFF, 0xFF, 0xFF_FFFF),
            V05Layout::FabricTna => (0x01FF, 0x1F, 0x07_FFFF),
        }
    }

    fn version(self) -> ReportVersion {
        match self {
            V05Layout::Spec => ReportVersion::V0_5,
            V05Layout::FabricTna => ReportVersion::V0_5FabricTna,
        }
    }
}

/// One TR v0.5 report at the start of `payload`; the rest of the payload is the inner frame.
pub fn parse(
    payload: &[u8],
    profile: &DeviceProfile,
    layout: V05Layout,
) -> Result<ReportHeader, DecodeError> {
    let mut r = Reader::new(payload, 0);
    let w0 = r.u32("tr_v0_5.word0")?;
    let seq = r.u32("tr_v0_5.seq")?;
    let ingress_ts = u64::from(r.u32("tr_v0_5.ingress_ts")?);
    let nproto = ((w0 >> 24) & 0xF) as u8;
    let (port_mask, qid_mask, occ_mask) = layout.masks();

    let mut drop_reason = None;
    let local = match nproto {
        NPROTO_ETHERNET => None,
        NPROTO_DROP | NPROTO_LOCAL => {
            let mut hop = Hop {
                switch_id: Some(r.u32("tr_v0_5.switch_id")?),
                ingress_port: Some(u32::from(r.u16("tr_v0_5.ingress_port")? & port_mask)),
                egress_port: Some(u32::from(r.u16("tr_v0_5.egress_port")? & port_mask)),
                ingress_ts: Some(ingress_ts),
                ..Hop::default()
            };
            let [qid, b1, b2, b3] = r.bytes("tr_v0_5.queue")?;
            hop.queue_id = Some(qid & qid_mask);
            if nproto == NPROTO_DROP {
                // Queue id (8) | drop reason (8) | pad (16).
                drop_reason = Some(b1);
            } else {
                // Queue id (8) | occupancy (24), then the egress timestamp.
                let units = u32::from_be_bytes([0, b1, b2, b3]) & occ_mask;
                hop.queue_occupancy_bytes = Some(occupancy_bytes(units, profile));
                hop.egress_ts = Some(u64::from(r.u32("tr_v0_5.egress_ts")?));
            }
            Some(hop)
        }
        other => {
            return Err(DecodeError::new(
                0,
                "tr_v0_5.nproto",
                u64::from(other),
                "0 (Ethernet), 1 (drop header) or 2 (switch-local header)",
            ));
        }
    };
    Ok(ReportHeader {
        version: layout.version(),
        switch_id: local.and_then(|h| h.switch_id),
        hw_id: (w0 & 0x3F) as u8,
        seq,
        ingress_ts: Some(ingress_ts),
        flags: flags_at(w0, FLAG_SHIFTS.0, FLAG_SHIFTS.1, FLAG_SHIFTS.2),
        drop_reason,
        local,
        inner: Some((InnerKind::Ethernet, r.pos()..payload.len())),
    })
}

/// Appends a TR v0.5 report: a drop header when `h.drop_reason` is set, else a switch-local
/// header when `h.local` is, else none; then `inner` (an Ethernet frame).
pub fn encode(
    h: &ReportHeader,
    inner: &[u8],
    profile: &DeviceProfile,
    layout: V05Layout,
    out: &mut Vec<u8>,
) {
    let nproto = match (h.drop_reason, h.local) {
        (Some(_), _) => NPROTO_DROP,
        (None, Some(_)) => NPROTO_LOCAL,
        (None, None) => NPROTO_ETHERNET,
    };
    let w0 = (u32::from(nproto) << 24)
        | flag_bits(h.flags, FLAG_SHIFTS.0, FLAG_SHIFTS.1, FLAG_SHIFTS.2)
        | u32::from(h.hw_id & 0x3F);
    out.extend_from_slice(&w0.to_be_bytes());
    out.extend_from_slice(&h.seq.to_be_bytes());
    out.extend_from_slice(&(h.ingress_ts.unwrap_or(0) as u32).to_be_bytes());
    if nproto != NPROTO_ETHERNET {
        let (port_mask, qid_mask, occ_mask) = layout.masks();
        let l = h.local.unwrap_or_default();
        let port = |p: Option<u32>| (p.unwrap_or(0) as u16) & port_mask;
        out.extend_from_slice(&h.switch_id.or(l.switch_id).unwrap_or(0).to_be_bytes());
        out.extend_from_slice(&port(l.ingress_port).to_be_bytes());
        out.extend_from_slice(&port(l.egress_port).to_be_bytes());
        let qid = l.queue_id.unwrap_or(0) & qid_mask;
        if let Some(reason) = h.drop_reason {
            out.extend_from_slice(&[qid, reason, 0, 0]);
        } else {
            let units = occupancy_units(l.queue_occupancy_bytes.unwrap_or(0), profile) as u32;
            out.extend_from_slice(&((u32::from(qid) << 24) | (units & occ_mask)).to_be_bytes());
            out.extend_from_slice(&(l.egress_ts.unwrap_or(0) as u32).to_be_bytes());
        }
    }
    out.extend_from_slice(inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReportFlags;
    use crate::report::parse_reports;

    fn fabric() -> DeviceProfile {
        DeviceProfile { name: FABRIC_TNA_PROFILE.into(), ..DeviceProfile::noviflow() }
    }

    // ---- constants ----

    #[test]
    fn constants_sizes_and_nproto_are_the_specs() {
        assert_eq!((FIXED_BYTES, DROP_BYTES, LOCAL_BYTES), (12, 12, 16));
        assert_eq!((NPROTO_ETHERNET, NPROTO_DROP, NPROTO_LOCAL), (0, 1, 2));
        assert_eq!(FLAG_SHIFTS, (23, 22, 21));
        assert_eq!(V05Layout::FabricTna.masks(), (0x1FF, 0x1F, 0x7FFFF));
        assert_eq!(V05Layout::for_profile(&fabric()), V05Layout::FabricTna);
        assert_eq!(V05Layout::for_profile(&DeviceProfile::noviflow()), V05Layout::Spec);
    }

    // ---- spec packing ----

    #[test]
    fn spec_onos_sample_fixed_header() {
        // int-telemetry.md §12.1, bytes 42–53 of the ONOS bmv2 frame, plus 2 inner bytes.
        let bytes = [
            0x00, 0x20, 0x00, 0x01, // Ver 0, NProto 0, D 0 Q 0 F 1, rsvd 0, hw_id 1
            0x00, 0x00, 0x00, 0x00, // seq 0
            0x00, 0x00, 0x00, 0x00, // ingress ts 0
            0xFF, 0xFF, // inner Ethernet starts here
        ];
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!(h.version, ReportVersion::V0_5);
        assert_eq!(h.flags, ReportFlags { dropped: false, congested: false, tracked: true });
        assert_eq!((h.hw_id, h.seq, h.ingress_ts, h.switch_id), (1, 0, Some(0), None));
        assert_eq!((h.local, h.drop_reason), (None, None));
        assert_eq!(h.inner, Some((InnerKind::Ethernet, 12..14)));
    }

    #[test]
    fn spec_switch_local_header_every_field() {
        let bytes = [
            0x02, 0xC0, 0x00, 0x3F, // Ver 0, NProto 2, D 1 Q 1 F 0, rsvd 0, hw_id 63
            0x00, 0x00, 0x01, 0x00, // seq 256
            0x80, 0x00, 0x00, 0x01, // ingress ts 0x80000001
            0x00, 0x00, 0x00, 0x07, // switch id 7
            0x01, 0x02, 0x03, 0x04, // ingress port 0x0102 | egress port 0x0304
            0x05, 0x00, 0x00, 0x6F, // queue id 5 | occupancy 111
            0x00, 0x00, 0x10, 0x00, // egress ts 4096
        ];
        let h = &parse_reports(&bytes, &DeviceProfile::noviflow()).unwrap()[0];
        assert_eq!((h.seq, h.hw_id, h.switch_id), (256, 63, Some(7)));
        assert!(h.flags.dropped && h.flags.congested && !h.flags.tracked);
        let l = h.local.unwrap();
        assert_eq!(
            (l.ingress_port, l.egress_port, l.queue_id),
            (Some(0x102), Some(0x304), Some(5))
        );
        assert_eq!(l.queue_occupancy_bytes, Some(111 * 80));
        assert_eq!((l.ingress_ts, l.egress_ts), (Some(0x8000_0001), Some(4096)));
        assert_eq!(h.inner, Some((InnerKind::Ethernet, 28..28)));
    }

    #[test]
    fn spec_drop_header_reason_and_reserved_bits_tolerated() {
        let bytes = [
            0x01, 0x9F, 0xFF,
            0xC2, // NProto 1, D 1 F 0 Q 0, all 15 reserved bits set, hw_id 2
            0x00, 0x00, 0x00, 0x09, // seq 9
            0x00, 0x00, 0x00, 0x10, // ingress ts 16
            0x00, 0x00, 0x00, 0x2A, // switch id 42
            0x00, 0x01, 0x00, 0x02, // ports 1 → 2
            0x03, 0x47, 0xAB, 0xCD, // queue 3 | drop reason 0x47 | pad (non-zero, ignored)
        ];
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!((h.hw_id, h.drop_reason, h.switch_id), (2, Some(0x47), Some(42)));
        assert!(h.flags.dropped && !h.flags.congested);
        let l = h.local.unwrap();
        assert_eq!((l.queue_id, l.queue_occupancy_bytes, l.egress_ts), (Some(3), None, None));
    }

    // ---- fabric-tna packing ----

    #[test]
    fn fabric_tna_local_header_masks_the_padding() {
        let bytes = [
            0x02, 0x40, 0x00, 0x03, // NProto 2, Q 1, hw_id 3 (= egress port bits 8:7)
            0x00, 0x00, 0x00, 0x05, // seq 5
            0x00, 0x00, 0x00, 0x06, // ingress ts 6
            0x00, 0x00, 0x00, 0x01, // switch id 1
            0xFF, 0x04, 0xFF, 0x85, // pad 7 set | ig port 0x104; pad 7 set | eg port 0x185
            0xE7, 0xFF, 0xFF, 0xFF, // pad 3 set | queue 7; pad 5 set | occupancy 0x7FFFF
            0x00, 0x00, 0x00, 0x08, // egress ts 8
            0xAA, // inner
        ];
        let h = &parse_reports(&bytes, &fabric()).unwrap()[0];
        assert_eq!(h.version, ReportVersion::V0_5FabricTna);
        let l = h.local.unwrap();
        assert_eq!(
            (l.ingress_port, l.egress_port, l.queue_id),
            (Some(0x104), Some(0x185), Some(7))
        );
        assert_eq!(l.queue_occupancy_bytes, Some(0x7FFFF * 80));
        assert_eq!(h.inner, Some((InnerKind::Ethernet, 28..29)));
        // The same bytes read by the spec see the padding as data.
        let s = &parse_reports(&bytes, &DeviceProfile::noviflow()).unwrap()[0];
        assert_eq!(s.local.unwrap().ingress_port, Some(0xFF04));
    }

    #[test]
    fn fabric_tna_drop_header_encodes_back() {
        let h = ReportHeader {
            version: ReportVersion::V0_5FabricTna,
            switch_id: Some(9),
            hw_id: 1,
            seq: 77,
            ingress_ts: Some(5),
            flags: ReportFlags { dropped: true, congested: false, tracked: false },
            drop_reason: Some(71),
            local: Some(Hop {
                switch_id: Some(9),
                ingress_port: Some(0x1FF),
                egress_port: Some(0x80),
                queue_id: Some(31),
                ingress_ts: Some(5),
                ..Hop::default()
            }),
            inner: None,
        };
        let mut out = Vec::new();
        super::encode(&h, &[1, 2], &fabric(), V05Layout::FabricTna, &mut out);
        assert_eq!(&out[12..24], &[0, 0, 0, 9, 0x01, 0xFF, 0x00, 0x80, 0x1F, 71, 0, 0]);
        let back = parse(&out, &fabric(), V05Layout::FabricTna).unwrap();
        assert_eq!(back, ReportHeader { inner: Some((InnerKind::Ethernet, 24..26)), ..h });
    }

    // ---- malformed ----

    #[test]
    fn malformed_unknown_nproto_names_it() {
        let bytes = [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let e = parse(&bytes, &DeviceProfile::spec(), V05Layout::Spec).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (0, "tr_v0_5.nproto", 3));
    }

    #[test]
    fn malformed_truncation_points_at_the_missing_field() {
        let mut bytes =
            vec![0x02, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 1, 0, 2, 0, 0, 0, 0];
        // Fixed header cut in the sequence number.
        let e = parse(&bytes[..6], &DeviceProfile::spec(), V05Layout::Spec).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (4, "tr_v0_5.seq", 2));
        // Switch-local header missing its egress timestamp.
        let e = parse(&bytes, &DeviceProfile::spec(), V05Layout::Spec).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (24, "tr_v0_5.egress_ts", 0));
        bytes.extend_from_slice(&[0, 0]);
        let e = parse(&bytes, &DeviceProfile::spec(), V05Layout::Spec).unwrap_err();
        assert_eq!((e.offset, e.value), (24, 2));
    }
}
