//! Property tests over every report version: encode ⇒ parse gives back what was encoded, and
//! arbitrary bytes give a value or a `DecodeError`, never a panic.

use super::v0_5::{FABRIC_TNA_PROFILE, V05Layout};
use super::{ReportHeader, encode_report, parse_reports, v2_0};
use crate::model::{Hop, InnerKind, ReportFlags, ReportVersion};
use crate::profile::{DeviceProfile, FlagLayout};
use proptest::prelude::*;

fn flags() -> impl Strategy<Value = ReportFlags> {
    (any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(dropped, congested, tracked)| ReportFlags { dropped, congested, tracked })
}

fn kind() -> impl Strategy<Value = InnerKind> {
    prop_oneof![Just(InnerKind::Ethernet), Just(InnerKind::Ipv4), Just(InnerKind::Ipv6)]
}

fn profile() -> impl Strategy<Value = DeviceProfile> {
    (prop_oneof![Just(1u32), Just(80), 1u32..1000], any::<bool>()).prop_map(|(cell_bytes, dqf)| {
        let flag_layout = if dqf { FlagLayout::DqfBeforeReserved } else { FlagLayout::Spec };
        DeviceProfile { cell_bytes, flag_layout, ..DeviceProfile::spec() }
    })
}

/// Parses `payload` and checks each header against `expected` (header, inner bytes).
fn check(payload: &[u8], profile: &DeviceProfile, expected: &[(ReportHeader, Vec<u8>)]) {
    let got = parse_reports(payload, profile).unwrap();
    assert_eq!(got.len(), expected.len());
    for (g, (e, inner)) in got.iter().zip(expected) {
        assert_eq!(
            ReportHeader { inner: None, ..g.clone() },
            ReportHeader { inner: None, ..e.clone() }
        );
        let g_inner = g.inner.clone().map(|(k, r)| (k, &payload[r]));
        assert_eq!(g_inner, e.inner.clone().map(|(k, _)| (k, &inner[..])));
    }
}

/// A TR v0.5 header with no, a drop or a switch-local header, values within `layout`'s fields.
fn v0_5_case(layout: V05Layout) -> impl Strategy<Value = (ReportHeader, Vec<u8>, DeviceProfile)> {
    let (port, qid, occ) = match layout {
        V05Layout::Spec => (0xFFFFu32, 0xFFu8, 0xFF_FFFFu32),
        V05Layout::FabricTna => (0x1FF, 0x1F, 0x7_FFFF),
    };
    let values = (any::<u32>(), 0..=port, 0..=port, 0..=qid, 0..=occ, any::<u32>(), any::<u8>());
    let fixed = (flags(), 0u8..64, any::<u32>(), any::<u32>());
    (
        0u8..3,
        values,
        fixed,
        proptest::collection::vec(any::<u8>(), 0..64),
        prop_oneof![Just(1u32), Just(80)],
    )
        .prop_map(
            move |(
                nproto,
                (sw, ig, eg, q, units, egts, reason),
                (flags, hw_id, seq, igts),
                inner,
                cell,
            )| {
                let name = if layout == V05Layout::FabricTna { FABRIC_TNA_PROFILE } else { "spec" };
                let profile =
                    DeviceProfile { name: name.into(), cell_bytes: cell, ..DeviceProfile::spec() };
                let hop = Hop {
                    switch_id: Some(sw),
                    ingress_port: Some(ig),
                    egress_port: Some(eg),
                    queue_id: Some(q),
                    ingress_ts: Some(u64::from(igts)),
                    ..Hop::default()
                };
                let local = match nproto {
                    0 => None,
                    1 => Some(hop),
                    _ => Some(Hop {
                        queue_occupancy_bytes: Some(u64::from(units) * u64::from(cell)),
                        egress_ts: Some(u64::from(egts)),
                        ..hop
                    }),
                };
                let h = ReportHeader {
                    version: match layout {
                        V05Layout::Spec => ReportVersion::V0_5,
                        V05Layout::FabricTna => ReportVersion::V0_5FabricTna,
                    },
                    switch_id: local.and_then(|l| l.switch_id),
                    hw_id,
                    seq,
                    ingress_ts: Some(u64::from(igts)),
                    flags,
                    drop_reason: (nproto == 1).then_some(reason),
                    local,
                    inner: Some((InnerKind::Ethernet, 0..0)),
                };
                (h, inner, profile)
            },
        )
}

/// The optional metadata of a TR v1.0 / v2.0 report: each item present or not.
#[derive(Clone, Debug)]
struct Md {
    ports: Option<(u32, u32)>,
    latency: Option<u32>,
    occupancy: Option<(u8, u32)>,
    ingress_ts: Option<u64>,
    egress_ts: Option<u64>,
    drop: Option<(u8, u8)>,
}

fn md(port_max: u32, ts_max: u64) -> impl Strategy<Value = Md> {
    (
        proptest::option::of((0..=port_max, 0..=port_max)),
        proptest::option::of(0..u32::MAX),
        proptest::option::of((any::<u8>(), 0u32..=0xFF_FFFF)),
        proptest::option::of(0..=ts_max),
        proptest::option::of(0..=ts_max),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(|(ports, latency, occupancy, ingress_ts, egress_ts, reason)| {
            // Both queue words carry one queue id.
            let drop = reason.map(|r| (occupancy.map_or(3, |(q, _)| q), r));
            Md { ports, latency, occupancy, ingress_ts, egress_ts, drop }
        })
}

impl Md {
    /// The hop `parse` returns; `ingress_ts` is `None` when the report does not carry it as
    /// optional metadata.
    fn hop(&self, switch_id: u32, ingress_ts: Option<u64>, cell: u32) -> Hop {
        Hop {
            switch_id: Some(switch_id),
            ingress_port: self.ports.map(|p| p.0),
            egress_port: self.ports.map(|p| p.1),
            hop_latency_ns: self.latency,
            queue_id: self.occupancy.map(|o| o.0).or(self.drop.map(|d| d.0)),
            queue_occupancy_bytes: self.occupancy.map(|o| u64::from(o.1) * u64::from(cell)),
            ingress_ts,
            egress_ts: self.egress_ts,
        }
    }

    fn any_local(&self) -> bool {
        self.ports.is_some()
            || self.latency.is_some()
            || self.occupancy.is_some()
            || self.egress_ts.is_some()
            || self.drop.is_some()
    }
}

fn v1_0_case() -> impl Strategy<Value = (ReportHeader, Vec<u8>, DeviceProfile)> {
    let fixed = (flags(), 0u8..64, any::<u32>(), any::<u32>(), any::<u32>());
    (
        md(0xFFFF, u64::from(u32::MAX)),
        fixed,
        kind(),
        proptest::collection::vec(any::<u8>(), 0..64),
        profile(),
    )
        .prop_map(|(md, (flags, hw_id, sw, seq, igts), kind, inner, profile)| {
            let igts = Some(u64::from(igts));
            let h = ReportHeader {
                version: ReportVersion::V1_0,
                switch_id: Some(sw),
                hw_id,
                seq,
                ingress_ts: igts,
                flags,
                drop_reason: md.drop.map(|d| d.1),
                local: md.any_local().then(|| md.hop(sw, igts, profile.cell_bytes)),
                inner: Some((kind, 0..0)),
            };
            (h, inner, profile)
        })
}

/// One TR v2.0 individual report, sharing the group's `node`, `hw_id` and `seq`.
fn v2_0_report(node: u32, hw_id: u8, seq: u32) -> impl Strategy<Value = (ReportHeader, Vec<u8>)> {
    let inner = proptest::option::of((kind(), proptest::collection::vec(any::<u32>(), 0..16)));
    (md(u32::MAX, u64::MAX), flags(), inner).prop_map(move |(md, flags, inner)| {
        let bytes: Vec<u8> =
            inner.iter().flat_map(|(_, w)| w.iter().flat_map(|w| w.to_be_bytes())).collect();
        let local =
            (md.any_local() || md.ingress_ts.is_some()).then(|| md.hop(node, md.ingress_ts, 80));
        let h = ReportHeader {
            version: ReportVersion::V2_0,
            switch_id: Some(node),
            hw_id,
            seq,
            ingress_ts: md.ingress_ts,
            flags,
            drop_reason: md.drop.map(|d| d.1),
            local,
            inner: inner.map(|(k, _)| (k, 0..0)),
        };
        (h, bytes)
    })
}

fn v2_0_group() -> impl Strategy<Value = (u32, u8, u32, Vec<(ReportHeader, Vec<u8>)>)> {
    (any::<u32>(), 0u8..64, 0u32..=v2_0::SEQ_MASK).prop_flat_map(|(node, hw_id, seq)| {
        let reports = proptest::collection::vec(v2_0_report(node, hw_id, seq), 1..5);
        (Just(node), Just(hw_id), Just(seq), reports)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn roundtrip_v0_5_spec((h, inner, p) in v0_5_case(V05Layout::Spec)) {
        let mut out = Vec::new();
        encode_report(&h, &inner, &p, &mut out);
        check(&out, &p, &[(h, inner)]);
    }

    #[test]
    fn roundtrip_v0_5_fabric_tna((h, inner, p) in v0_5_case(V05Layout::FabricTna)) {
        let mut out = Vec::new();
        encode_report(&h, &inner, &p, &mut out);
        check(&out, &p, &[(h, inner)]);
    }

    #[test]
    fn roundtrip_v1_0((h, inner, p) in v1_0_case()) {
        let mut out = Vec::new();
        encode_report(&h, &inner, &p, &mut out);
        check(&out, &p, &[(h, inner)]);
    }

    #[test]
    fn roundtrip_v2_0_coalesced((node, hw_id, seq, reports) in v2_0_group()) {
        let p = DeviceProfile::noviflow();
        let mut out = Vec::new();
        v2_0::encode_group_header(hw_id, seq, node, &mut out);
        for (h, inner) in &reports {
            v2_0::encode_individual(h, inner, &p, &mut out);
        }
        check(&out, &p, &reports);
        // A single report through the generic encoder.
        let mut one = Vec::new();
        encode_report(&reports[0].0, &reports[0].1, &p, &mut one);
        check(&one, &p, &reports[..1]);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                                   nibble in 0u8..4, p in profile(), fabric in any::<bool>()) {
        let mut bytes = bytes;
        if let Some(b) = bytes.first_mut() {
            *b = (nibble << 4) | (*b & 0x0F);
        }
        let p = if fabric { DeviceProfile { name: FABRIC_TNA_PROFILE.into(), ..p } } else { p };
        match parse_reports(&bytes, &p) {
            Ok(hs) => {
                prop_assert!(hs.len() <= bytes.len() / 4);
                for h in hs {
                    let inner = match &h.inner {
                        Some((_, r)) => {
                            prop_assert!(r.start <= r.end && r.end <= bytes.len());
                            &bytes[r.clone()]
                        }
                        None => &[][..],
                    };
                    // Whatever was read encodes to bytes that read back.
                    let mut again = Vec::new();
                    encode_report(&h, inner, &p, &mut again);
                    prop_assert!(parse_reports(&again, &p).is_ok());
                }
            }
            Err(e) => prop_assert!(e.offset <= bytes.len(), "{e}"),
        }
    }
}

#[test]
fn roundtrip_v2_0_long_report_runs_to_the_end() {
    // 2 main-contents words + 300 inner words > 254: Report Length 0xFF.
    let p = DeviceProfile::spec();
    let h = ReportHeader {
        version: ReportVersion::V2_0,
        switch_id: Some(1),
        hw_id: 2,
        seq: 3,
        ingress_ts: None,
        flags: ReportFlags::default(),
        drop_reason: None,
        local: None,
        inner: Some((InnerKind::Ipv4, 0..0)),
    };
    let inner = vec![0x45; 1200];
    let mut out = Vec::new();
    encode_report(&h, &inner, &p, &mut out);
    assert_eq!(out[9], v2_0::LENGTH_TO_END);
    check(&out, &p, &[(h, inner)]);
}
