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
        }
    }
}

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
    fn default_ports_are_the_deployed_ones() {
        assert_eq!(DEFAULT_REPORT_PORTS, [5900, 32766, 8090, 1234]);
        assert_eq!(NOVIFLOW_PORT, DEFAULT_REPORT_PORTS[0]);
    }
}
