//! The device profile file: which [`DeviceProfile`] reads a report, by the reporting switch's
//! id, else by the report's UDP destination port, else the default (int-telemetry.md §9–§11,
//! §16.1).
//!
//! ```toml
//! [default]                  # optional; the spec's units when absent
//! base = "spec"
//!
//! [port.8090]                # GEANT: 64-bit timestamps in v1.0 stacks
//! base = "spec"
//! timestamp_bytes = 8
//!
//! [switch.0xFB65D675]        # decimal or 0x-hex switch / node id
//! base = "noviflow"
//! flag_layout = "dqf-before-reserved"
//! ```
//!
//! Each table starts from a built-in profile (`base`, default `"spec"`) and overrides `name`,
//! `cell_bytes` (≥ 1), `timestamp_bytes` (4 or 8), `flag_layout` (`"spec"` or
//! `"dqf-before-reserved"`), `source_only_words` (0–255: the INT domain's source-only
//! metadata size, [`DeviceProfile::source_only_words`]), `l2_port_bytes` (4 or 8) and
//! `report_version_1` (`"1.0"`; `"0.5"` or `"2.0"` for generators that send the TR v0.5 or
//! v2.0 layout with version nibble 1), `int_md_version` (`"0.5"` or `"1.0"`: what a Type 1
//! shim's stack is, whatever its MD Ver says). Bases: `"spec"`, `"noviflow"`, `"fabric-tna"`,
//! `"geant"`, `"bmv2-int-mx"`. A file extends [`Profiles::builtin`]: UDP 5900 stays NoviFlow
//! and 32766 fabric-tna unless the file names those ports.

use crate::profile::{BMV2_INT_MX_PROFILE, DeviceProfile, FlagLayout, NOVIFLOW_PORT, TrV1Layout};
use crate::report::v0_5::FABRIC_TNA_PROFILE;
use rustc_hash::FxHashMap;
use std::fmt;
use toml::Value;

/// ONOS / SD-Fabric fabric-tna's report port (int-telemetry.md §2.3, §10).
pub const FABRIC_TNA_PORT: u16 = 32766;

/// Device profiles chosen per report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profiles {
    pub default: DeviceProfile,
    pub by_port: FxHashMap<u16, DeviceProfile>,
    pub by_switch: FxHashMap<u32, DeviceProfile>,
}

/// A profile file that cannot be used: the key, the value found and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("profile file: {key} = {value}: expected {expected}")]
pub struct ProfileError {
    pub key: String,
    pub value: String,
    pub expected: String,
}

impl ProfileError {
    fn new(key: impl Into<String>, value: impl fmt::Display, expected: impl Into<String>) -> Self {
        ProfileError { key: key.into(), value: value.to_string(), expected: expected.into() }
    }
}

/// TR v0.5 reports from stratum/fabric-tna on Tofino: the fabric-tna packing (§2.3), occupancy
/// in 80-byte Tofino cells (`deq_qdepth`, §8).
pub fn fabric_tna() -> DeviceProfile {
    DeviceProfile { name: FABRIC_TNA_PROFILE.into(), ..DeviceProfile::noviflow() }
}

/// The built-in profiles a `base` key may name.
fn builtin_named(name: &str) -> Option<DeviceProfile> {
    match name {
        "spec" => Some(DeviceProfile::spec()),
        "noviflow" => Some(DeviceProfile::noviflow()),
        FABRIC_TNA_PROFILE => Some(fabric_tna()),
        "geant" => Some(DeviceProfile::geant()),
        BMV2_INT_MX_PROFILE => Some(DeviceProfile::bmv2_int_mx()),
        _ => None,
    }
}

impl Profiles {
    /// No profile file: the spec's units, NoviFlow on UDP 5900 as AmLight runs it (issue 6),
    /// fabric-tna on UDP 32766.
    pub fn builtin() -> Self {
        let mut by_port = FxHashMap::default();
        by_port.insert(NOVIFLOW_PORT, DeviceProfile::noviflow());
        by_port.insert(FABRIC_TNA_PORT, fabric_tna());
        Profiles { default: DeviceProfile::spec(), by_port, by_switch: FxHashMap::default() }
    }

    /// The profile for a report from `switch_id` (when the report names it) arriving on UDP
    /// `udp_dport`: the switch's own, else the port's, else the default.
    pub fn for_report(&self, udp_dport: u16, switch_id: Option<u32>) -> &DeviceProfile {
        switch_id
            .and_then(|id| self.by_switch.get(&id))
            .or_else(|| self.by_port.get(&udp_dport))
            .unwrap_or(&self.default)
    }

    pub fn from_toml_str(text: &str) -> Result<Profiles, ProfileError> {
        let root: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ProfileError::new("(document)", e.message().trim(), "a TOML document")
        })?;
        let mut out = Profiles::builtin();
        for (key, value) in &root {
            match key.as_str() {
                "default" => out.default = profile(key, value)?,
                "port" => {
                    for (k, v) in table(key, value)? {
                        let path = format!("port.{k}");
                        let port = k.parse::<u16>().map_err(|_| {
                            ProfileError::new(&path, k, "a UDP port number 0–65535")
                        })?;
                        out.by_port.insert(port, profile(&path, v)?);
                    }
                }
                "switch" => {
                    for (k, v) in table(key, value)? {
                        let path = format!("switch.{k}");
                        let id = parse_u32(k).ok_or_else(|| {
                            ProfileError::new(&path, k, "a switch id: decimal or 0x-hex, 32 bits")
                        })?;
                        out.by_switch.insert(id, profile(&path, v)?);
                    }
                }
                _ => return Err(ProfileError::new(key, value, "one of default, port, switch")),
            }
        }
        Ok(out)
    }
}

fn parse_u32(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn table<'a>(key: &str, value: &'a Value) -> Result<&'a toml::Table, ProfileError> {
    value.as_table().ok_or_else(|| ProfileError::new(key, value, "a table"))
}

/// One profile table: a `base`, then overrides.
fn profile(path: &str, value: &Value) -> Result<DeviceProfile, ProfileError> {
    let t = table(path, value)?;
    let mut p = match t.get("base") {
        None => DeviceProfile::spec(),
        Some(v) => v.as_str().and_then(builtin_named).ok_or_else(|| {
            ProfileError::new(
                format!("{path}.base"),
                v,
                "\"spec\", \"noviflow\", \"fabric-tna\", \"geant\" or \"bmv2-int-mx\"",
            )
        })?,
    };
    for (k, v) in t {
        let key = format!("{path}.{k}");
        match k.as_str() {
            "base" => {}
            "name" => {
                p.name = v.as_str().ok_or_else(|| ProfileError::new(&key, v, "a string"))?.into();
            }
            "cell_bytes" => {
                p.cell_bytes = v
                    .as_integer()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| ProfileError::new(&key, v, "bytes per occupancy unit, ≥ 1"))?;
            }
            "timestamp_bytes" => {
                p.timestamp_bytes = match v.as_integer() {
                    Some(4) => 4,
                    Some(8) => 8,
                    _ => return Err(ProfileError::new(&key, v, "4 or 8")),
                };
            }
            "flag_layout" => {
                p.flag_layout = match v.as_str() {
                    Some("spec") => FlagLayout::Spec,
                    Some("dqf-before-reserved") => FlagLayout::DqfBeforeReserved,
                    _ => {
                        return Err(ProfileError::new(
                            &key,
                            v,
                            "\"spec\" or \"dqf-before-reserved\"",
                        ));
                    }
                };
            }
            "l2_port_bytes" => {
                p.l2_port_bytes = match v.as_integer() {
                    Some(4) => 4,
                    Some(8) => 8,
                    _ => return Err(ProfileError::new(&key, v, "4 or 8")),
                };
            }
            "int_md_version" => {
                p.int_md_version = match v.as_str() {
                    Some("0.5") => Some(crate::model::IntVersion::V0_5),
                    Some("1.0") => Some(crate::model::IntVersion::V1_0),
                    _ => return Err(ProfileError::new(&key, v, "\"0.5\" or \"1.0\"")),
                };
            }
            "report_version_1" => {
                p.tr_v1_layout = match v.as_str() {
                    Some("1.0") => TrV1Layout::V1_0,
                    Some("0.5") => TrV1Layout::V0_5,
                    Some("2.0") => TrV1Layout::V2_0,
                    _ => return Err(ProfileError::new(&key, v, "\"1.0\", \"0.5\" or \"2.0\"")),
                };
            }
            "source_only_words" => {
                let words = v.as_integer().and_then(|n| u8::try_from(n).ok());
                p.source_only_words = Some(words.ok_or_else(|| {
                    ProfileError::new(&key, v, "words of INT v2.1 source-only metadata, 0–255")
                })?);
            }
            _ => {
                return Err(ProfileError::new(
                    &key,
                    v,
                    "no such key; known: base, name, cell_bytes, timestamp_bytes, flag_layout, \
                     source_only_words, l2_port_bytes, report_version_1, int_md_version",
                ));
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- built-in ----

    #[test]
    fn builtin_ports_pick_noviflow_and_fabric_tna() {
        let p = Profiles::builtin();
        assert_eq!(FABRIC_TNA_PORT, 32766);
        assert_eq!(p.for_report(5900, None), &DeviceProfile::noviflow());
        assert_eq!(p.for_report(32766, Some(1)).name, "fabric-tna");
        assert_eq!(p.for_report(32766, None).cell_bytes, 80);
        assert_eq!(p.for_report(8090, None), &DeviceProfile::spec());
        assert_eq!(
            crate::report::V05Layout::for_profile(p.for_report(32766, None)),
            crate::report::V05Layout::FabricTna
        );
    }

    #[test]
    fn base_bmv2_int_mx_reads_ver_1_as_tr_v2_0_in_packets_and_microseconds() {
        let p = Profiles::from_toml_str("[port.1234]\nbase = \"bmv2-int-mx\"").unwrap();
        let b = p.for_report(1234, None);
        assert_eq!(b, &DeviceProfile::bmv2_int_mx());
        assert_eq!((b.name.as_str(), b.tr_v1_layout), ("bmv2-int-mx", TrV1Layout::V2_0));
        assert_eq!((b.cell_bytes, b.time_unit_ns), (1500, 1000));
        assert!(b.tr_v2_length_to_end && b.inner_always_ethernet && b.int_mx_hops);
        // Unnamed ports keep the spec's reading of version nibble 1.
        assert_eq!(p.for_report(8090, None).tr_v1_layout, TrV1Layout::V1_0);
        let v = Profiles::from_toml_str("[port.9]\nreport_version_1 = \"2.0\"").unwrap();
        assert_eq!(v.for_report(9, None).tr_v1_layout, TrV1Layout::V2_0);
        assert!(!v.for_report(9, None).int_mx_hops, "only the layout changes");
    }

    // ---- file ----

    #[test]
    fn file_switch_beats_port_beats_default() {
        let p = Profiles::from_toml_str(
            r#"
            [default]
            base = "noviflow"
            cell_bytes = 160
            [port.8090]
            timestamp_bytes = 8
            name = "geant"
            [switch.0xFB65D675]
            base = "noviflow"
            flag_layout = "dqf-before-reserved"
            [switch.7]
            cell_bytes = 1
            source_only_words = 2
            "#,
        )
        .unwrap();
        assert_eq!((p.default.cell_bytes, p.default.timestamp_bytes), (160, 4));
        let geant = p.for_report(8090, Some(3));
        assert_eq!((geant.name.as_str(), geant.timestamp_bytes, geant.cell_bytes), ("geant", 8, 1));
        let nf = p.for_report(8090, Some(0xFB65_D675));
        assert_eq!((nf.flag_layout, nf.cell_bytes), (FlagLayout::DqfBeforeReserved, 80));
        assert_eq!(p.for_report(1, Some(7)).cell_bytes, 1);
        assert_eq!(p.for_report(1, Some(7)).source_only_words, Some(2));
        assert_eq!(p.for_report(1, None).cell_bytes, 160);
        // The built-in ports survive a file that does not name them.
        assert_eq!(p.for_report(5900, None), &DeviceProfile::noviflow());
    }

    #[test]
    fn file_errors_name_key_value_and_expectation() {
        let cases = [
            ("[port.70000]", "port.70000", "70000", "a UDP port"),
            ("[switch.sw1]", "switch.sw1", "sw1", "a switch id"),
            ("[default]\ncell_bytes = 0", "default.cell_bytes", "0", "bytes per occupancy"),
            ("[default]\ntimestamp_bytes = 6", "default.timestamp_bytes", "6", "4 or 8"),
            ("[port.1]\nflag_layout = \"dqf\"", "port.1.flag_layout", "\"dqf\"", "\"spec\" or"),
            ("[port.1]\nbase = \"tofino\"", "port.1.base", "\"tofino\"", "\"spec\", \"noviflow\""),
            ("[port.1]\ncells = 80", "port.1.cells", "80", "no such key"),
            ("[port.1]\nsource_only_words = 256", "port.1.source_only_words", "256", "words of"),
            ("ports = 1", "ports", "1", "one of default"),
            ("port = 5900", "port", "5900", "a table"),
            (
                "[port.1]\nreport_version_1 = \"2.1\"",
                "port.1.report_version_1",
                "\"2.1\"",
                "\"1.0\",",
            ),
        ];
        for (text, key, value, expected) in cases {
            let e = Profiles::from_toml_str(text).unwrap_err();
            assert_eq!((e.key.as_str(), e.value.as_str()), (key, value), "{text}");
            assert!(e.expected.starts_with(expected), "{text}: {}", e.expected);
        }
        let e = Profiles::from_toml_str("[default\n").unwrap_err();
        assert_eq!(e.key, "(document)");
        assert!(e.to_string().starts_with("profile file: (document) = "), "{e}");
    }
}
