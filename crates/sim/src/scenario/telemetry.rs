//! `[telemetry]`: the switch ports that record INT metadata, and how many packets they sample.
//!
//! ```toml
//! [telemetry]
//! int_ports = ["swA:swA->swB"]   # node:port, as the queue table names them
//! int_sample = 1                 # 1 in N packets per port (default 1: every packet)
//! ```
//!
//! Port names depend on the topology, so they are checked against the network the scenario
//! builds: a typo gets the list of INT-capable (switch) ports.

use super::error::ScenarioError;
use super::fields::Fields;
use super::model::{IntPort, Scenario, Telemetry};
use crate::net::topology::NodeKind;

type Result<T> = std::result::Result<T, ScenarioError>;

const PORT_EXPECTED: &str = "strings \"node:port\" naming switch ports, such as \"swA:swA->swB\"";
/// Names listed in an error before it says "…": enough to show the pattern.
const LISTED_NAMES: usize = 6;

/// `[telemetry]` as written, its port names not yet checked: what the memory estimate needs
/// (how many INT ports, how they sample) before the network is built to check the names.
pub(crate) fn unchecked(t: &Fields) -> Result<Telemetry> {
    let int_sample = t.integer("int_sample", 1..=i64::from(u32::MAX))?.map_or(1, |n| n as u32);
    let names = t.strings("int_ports", PORT_EXPECTED)?.unwrap_or_default();
    let int_ports = (names.iter().map(|n| n.split_once(':').unwrap_or((n, ""))))
        .map(|(node, port)| IntPort { node: node.to_owned(), port: port.to_owned() })
        .collect();
    Ok(Telemetry { int_ports, int_sample })
}

/// Reads `[telemetry]` (`t`) for the otherwise complete scenario `scn`.
pub(crate) fn telemetry(t: &Fields, scn: &Scenario) -> Result<Telemetry> {
    let int_sample = t.integer("int_sample", 1..=i64::from(u32::MAX))?.map_or(1, |n| n as u32);
    let Some(names) = t.strings("int_ports", PORT_EXPECTED)? else {
        return Ok(Telemetry { int_ports: Vec::new(), int_sample });
    };
    let net = scn.network();
    let switch_ports: Vec<String> = net
        .ports
        .iter()
        .filter(|p| net.nodes[p.node as usize].kind == NodeKind::Switch)
        .map(|p| format!("{}:{}", net.nodes[p.node as usize].name, p.name))
        .collect();
    let mut int_ports: Vec<IntPort> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let at = format!("{}[{i}]", t.path("int_ports"));
        let value = toml::Value::String((*name).to_owned());
        if !switch_ports.iter().any(|s| s == name) {
            return Err(ScenarioError::field(&at, &value, one_of(&switch_ports)));
        }
        let (node, port) = name.split_once(':').expect("switch port names contain ':'");
        if int_ports.iter().any(|p| p.node == node && p.port == port) {
            return Err(ScenarioError::field(&at, &value, "each port once"));
        }
        int_ports.push(IntPort { node: node.to_owned(), port: port.to_owned() });
    }
    Ok(Telemetry { int_ports, int_sample })
}

/// "a switch port: one of "a", "b", … (N in all)".
fn one_of(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(LISTED_NAMES).map(|n| format!("\"{n}\"")).collect();
    let more = if names.len() > LISTED_NAMES {
        format!(", … ({} in all)", names.len())
    } else {
        String::new()
    };
    format!("a switch port \"node:port\": one of {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use crate::scenario::{ScenarioError, load};

    const BASE: &str = "name = \"t\"\n[topology]\nbottleneck_rate = \"1Gbps\"\nrtt = \"10ms\"\n\
                        [[flow]]\ncca = \"reno\"\nsize = \"1MB\"\n";

    fn with(telemetry: &str) -> Result<crate::scenario::Scenario, ScenarioError> {
        load(&format!("{BASE}[telemetry]\n{telemetry}\n"), &[])
    }

    #[test]
    fn telemetry_absent_means_int_off_sampling_every_packet() {
        let s = load(BASE, &[]).unwrap();
        assert!(s.telemetry.int_ports.is_empty());
        assert_eq!(s.telemetry.int_sample, 1);
    }

    #[test]
    fn telemetry_bottleneck_and_sample_are_read() {
        let s = with("int_ports = [\"swA:swA->swB\", \"swB:swB->r0\"]\nint_sample = 8").unwrap();
        let names: Vec<_> =
            s.telemetry.int_ports.iter().map(|p| (p.node.as_str(), p.port.as_str())).collect();
        assert_eq!(names, [("swA", "swA->swB"), ("swB", "swB->r0")]);
        assert_eq!(s.telemetry.int_sample, 8);
    }

    #[test]
    fn telemetry_unknown_port_lists_switch_ports() {
        let e = with("int_ports = [\"swA:bottleneck\"]").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "scenario.telemetry.int_ports[0] = \"swA:bottleneck\": expected a switch port"
            ),
            "{msg}"
        );
        assert!(msg.contains("\"swA:swA->swB\""), "{msg}");
        assert_eq!(e.kind(), "field");
    }

    #[test]
    fn telemetry_host_port_is_refused() {
        // s0 is a host: its NIC queue is not a switch port and has no INT.
        let e = with("int_ports = [\"s0:s0->swA\"]").unwrap_err();
        assert!(
            e.to_string().starts_with("scenario.telemetry.int_ports[0] = \"s0:s0->swA\""),
            "{e}"
        );
    }

    #[test]
    fn telemetry_duplicate_port_is_refused() {
        let e = with("int_ports = [\"swA:swA->swB\", \"swA:swA->swB\"]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "scenario.telemetry.int_ports[1] = \"swA:swA->swB\": expected each port once"
        );
    }

    #[test]
    fn telemetry_sample_zero_is_refused() {
        let e = with("int_sample = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "scenario.telemetry.int_sample = 0: expected an integer from 1 to 4294967295"
        );
    }

    #[test]
    fn telemetry_ports_must_be_strings() {
        let e = with("int_ports = \"swA:swA->swB\"").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "scenario.telemetry.int_ports = \"swA:swA->swB\": expected an array of"
            ),
            "{e}"
        );
        let e = with("int_ports = [3]").unwrap_err();
        assert!(
            e.to_string().starts_with("scenario.telemetry.int_ports[0] = 3: expected strings"),
            "{e}"
        );
    }

    #[test]
    fn telemetry_set_override_enables_int() {
        let s = load(BASE, &["telemetry.int_ports=[\"swA:swA->swB\"]".into()]).unwrap();
        assert_eq!(s.telemetry.int_ports.len(), 1);
        let e = load(BASE, &["telemetry.int_sampel=2".into()]).unwrap_err();
        assert_eq!(e.kind(), "override");
        assert!(e.to_string().contains("did you mean \"telemetry.int_sample\""), "{e}");
    }
}
