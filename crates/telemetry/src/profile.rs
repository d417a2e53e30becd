//! Device profiles: the conventions a device uses that the wire does not say
//! (int-telemetry.md §9, §11, §16.1).

use serde::Serialize;

/// How a TR v1.0 device lays out bits 8–31 of word 0. The spec puts Reserved before D/Q/F;
/// some implementations put D/Q/F first (int-telemetry.md §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum FlagLayout {
    #[default]
    Spec,
    /// `nproto:3 rep_md_bits:6 d q f rsvd:6 hw_id:6` (mandaryoshi/p4-int's dissector).
    DqfBeforeReserved,
}

/// How a reported data packet says it carries an embedded INT stack (int-telemetry.md §6
/// "Presence over TCP/UDP": a DSCP value or bit, chosen per domain).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum IntDetect {
    /// No DSCP convention is trusted: INT is present when the bytes after the L4 header start
    /// with a shim we recognise — Type 1 in the first byte with an MD header of Ver 0 or 1
    /// (INT v0.5 / v1.0), or Type nibble 1 (MD) or 3 (MX) with an MD header of Ver 2 (INT
    /// v2.x). Once recognised, every length must agree or the packet is malformed.
    #[default]
    Shim,
    /// INT is present exactly when `dscp & mask == value`; a marked packet without a valid
    /// shim is malformed, an unmarked one carries no INT whatever its payload.
    Dscp { value: u8, mask: u8 },
}

/// The DSCP the INT v1.0 specification's example uses to mark INT packets, and AmLight's
/// inner IP ToS `0x17 << 2` (int-telemetry.md §6).
pub const INT_DSCP: u8 = 0x17;

/// What a TR version nibble of 1 announces. The wire says `Ver = 1`; only the device knows
/// which layout follows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum TrV1Layout {
    /// TR v1.0, as specified.
    #[default]
    V1_0,
    /// The TR v0.5 layout: early ONOS and AmLight (BPFCollector `INT_gen`) generators.
    V0_5,
    /// The TR v2.0 group and individual report headers: laofan13/P4-INT's bmv2 INT-MX program
    /// (`int-mx/p4src/include/int_sink.p4` @ 920dbc6: `report_group_header.ver = 1`).
    V2_0,
}

/// One device's conventions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceProfile {
    pub name: String,
    /// Bytes per queue-occupancy unit: 80 on Tofino / NoviFlow (cells), 1 where the device
    /// reports bytes (int-telemetry.md §8).
    pub cell_bytes: u32,
    /// Width of per-hop ingress/egress timestamps in the embedded INT stack: 4 in INT v0.5/v1.0
    /// as specified, 8 in INT v2.x and in GEANT's v1.0 stacks (§1, §11).
    pub timestamp_bytes: u8,
    pub flag_layout: FlagLayout,
    /// How the presence of embedded INT is signalled in the reported packet.
    pub int_detect: IntDetect,
    /// DSCP our encoder sets on packets carrying INT.
    pub int_dscp: u8,
    /// INT sits right after the fixed 20-byte TCP header, before any TCP options, as NoviFlow
    /// inserts it (§11); otherwise after the options (the INT spec's other domain-wide choice).
    pub int_before_tcp_options: bool,
    /// Words of INT v2.1 'source-only' domain-specific metadata the INT source adds after its
    /// own hop when DS Instruction bits are set: the INT domain defines it and the wire does
    /// not say. `None`: a known domain's size, else what whole hops of Hop ML leave over.
    pub source_only_words: Option<u8>,
    /// Bytes of the level-2 ingress + egress port ids (INT v1.0 / v2.1 bitmap bit 6): 8 as
    /// specified, 4 on GEANT's INT v1.0 (one word, int-collector `BPFCollector.c`).
    pub l2_port_bytes: u8,
    /// Which layout TR version nibble 1 announces.
    pub tr_v1_layout: TrV1Layout,
    /// TR v1.0 Length is not trusted; the header's size comes from RepMdBits alone (GEANT's
    /// int-collector generator sends `len = 1`, and its collector never reads it).
    pub tr_v1_length_from_bits: bool,
    /// An embedded stack behind a Type 1 shim is this INT version whatever its MD Ver says
    /// (GEANT's generator writes MD `ver = 0` over the v1.0 layout: HopML, RemainingHopCnt).
    pub int_md_version: Option<crate::model::IntVersion>,
    /// TR v2.0 Report Length is not trusted: each packet holds one individual report, which
    /// runs to the end of the payload (bmv2 INT-MX sends Report Length 0).
    pub tr_v2_length_to_end: bool,
    /// The reported packet starts with Ethernet whenever the report says it carries one,
    /// whatever its InType (bmv2 INT-MX sends InType 4, IPv4, before the Ethernet header).
    pub inner_always_ethernet: bool,
    /// An INT-MX header is followed by hops of the instruction bitmap's size, counted by the
    /// shim Length, as an INT-MD stack would be; the spec's INT-MX carries none (bmv2 INT-MX
    /// puts the reporting switch's own metadata there).
    pub int_mx_hops: bool,
    /// Nanoseconds per unit of the device's timestamps and hop latency: 1 where it counts ns
    /// (the specs), 1000 on bmv2, whose clocks count µs (p4lang/behavioral-model
    /// `docs/simple_switch.md`, `ingress_global_timestamp`, `egress_global_timestamp`).
    pub time_unit_ns: u32,
}

impl DeviceProfile {
    /// AmLight's NoviFlow / Tofino switches (int-telemetry.md §9): occupancy in 80-byte cells,
    /// 32-bit timestamps.
    pub fn noviflow() -> Self {
        DeviceProfile {
            name: "noviflow".into(),
            cell_bytes: 80,
            timestamp_bytes: 4,
            flag_layout: FlagLayout::Spec,
            int_detect: IntDetect::Shim,
            int_dscp: INT_DSCP,
            int_before_tcp_options: true,
            source_only_words: None,
            l2_port_bytes: 8,
            tr_v1_layout: TrV1Layout::V1_0,
            tr_v1_length_from_bits: false,
            int_md_version: None,
            tr_v2_length_to_end: false,
            inner_always_ethernet: false,
            int_mx_hops: false,
            time_unit_ns: 1,
        }
    }

    /// The specifications' own units: occupancy in bytes, 4-byte timestamps (INT v2.x stacks
    /// carry 8-byte timestamps whatever the profile says).
    pub fn spec() -> Self {
        DeviceProfile {
            name: "spec".into(),
            cell_bytes: 1,
            timestamp_bytes: 4,
            flag_layout: FlagLayout::Spec,
            int_detect: IntDetect::Shim,
            int_dscp: INT_DSCP,
            int_before_tcp_options: false,
            source_only_words: None,
            l2_port_bytes: 8,
            tr_v1_layout: TrV1Layout::V1_0,
            tr_v1_length_from_bits: false,
            int_md_version: None,
            tr_v2_length_to_end: false,
            inner_always_ethernet: false,
            int_mx_hops: false,
            time_unit_ns: 1,
        }
    }
}

impl DeviceProfile {
    /// GEANT's INT v1.0 platforms (GEANT-DataPlaneProgramming): 64-bit timestamps in a stack
    /// labelled v1.0 (int-platforms README, int-telemetry.md §11) and level-2 port ids in one
    /// 4-byte word (int-collector `BPFCollector.c`: `u32 lv2_in_e_port_ids`); occupancy in
    /// bytes. The wire does not say any of it, so this is chosen by profile.
    /// Its generator (int-collector `benchmark/int_package_generator.py`) also writes TR v1.0
    /// `len = 1` and MD `ver = 0` over v1.0 stacks, which this profile reads as v1.0.
    pub fn geant() -> Self {
        DeviceProfile {
            name: "geant".into(),
            timestamp_bytes: 8,
            l2_port_bytes: 4,
            tr_v1_length_from_bits: true,
            int_md_version: Some(crate::model::IntVersion::V1_0),
            ..Self::spec()
        }
    }
}

impl DeviceProfile {
    /// laofan13/P4-INT's INT-MX program on bmv2 (`int-mx/` @ 920dbc6, GPL-3.0; its captures
    /// `int-mx/pcap/s*-cpu-eth0_out.pcap`): every INT node clones the packet and sends its own
    /// report, with the TR v2.0 headers under version nibble 1, Report Length 0, InType 4 before
    /// an Ethernet header, and the node's metadata after the INT-MX header, counted by the shim
    /// Length (`int_sink.p4` `do_report_encapsulation`, `parser.p4` `Int_Deparser`). bmv2 times
    /// in µs; occupancy is `deq_qdepth`, in packets (its collector prints "packet(s)"), read
    /// as 1,500 bytes each (an Ethernet MTU): an estimate, `cell_bytes` overrides it.
    pub fn bmv2_int_mx() -> Self {
        DeviceProfile {
            name: BMV2_INT_MX_PROFILE.into(),
            cell_bytes: BMV2_PACKET_BYTES,
            tr_v1_layout: TrV1Layout::V2_0,
            tr_v2_length_to_end: true,
            inner_always_ethernet: true,
            int_mx_hops: true,
            time_unit_ns: 1000,
            ..Self::spec()
        }
    }
}

/// The name of [`DeviceProfile::bmv2_int_mx`], as a profile file's `base` names it.
pub const BMV2_INT_MX_PROFILE: &str = "bmv2-int-mx";

/// Bytes one queued packet stands for where a device counts packets (bmv2 `deq_qdepth`): an
/// Ethernet MTU.
pub const BMV2_PACKET_BYTES: u32 = 1500;

/// Report UDP destination ports decoded by default (int-telemetry.md §10): AmLight/NoviFlow
/// 5900, ONOS/fabric-tna 32766, GEANT 8090, and 1234 (BPFCollector / p4-int demos).
pub const DEFAULT_REPORT_PORTS: [u16; 4] = [5900, 32766, 8090, 1234];

/// With no profile file, reports arriving on UDP 5900 are read as AmLight runs them.
pub const NOVIFLOW_PORT: u16 = 5900;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noviflow_counts_80_byte_cells_and_32_bit_timestamps() {
        let p = DeviceProfile::noviflow();
        assert_eq!((p.cell_bytes, p.timestamp_bytes), (80, 4));
    }

    #[test]
    fn noviflow_puts_int_before_tcp_options_and_marks_dscp_0x17() {
        let p = DeviceProfile::noviflow();
        assert!(p.int_before_tcp_options);
        assert_eq!((p.int_dscp, p.int_dscp << 2), (0x17, 0x5C));
        assert!(!DeviceProfile::spec().int_before_tcp_options);
    }

    #[test]
    fn default_ports_are_the_deployed_ones() {
        assert_eq!(DEFAULT_REPORT_PORTS, [5900, 32766, 8090, 1234]);
        assert_eq!(NOVIFLOW_PORT, DEFAULT_REPORT_PORTS[0]);
    }
}
