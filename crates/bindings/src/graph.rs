//! The expanded network of a scenario as JSON, for `burstlab graph`: the simulator's
//! [`GraphView`](burstlab_sim::net::graph::GraphView) (nodes, links, each flow's path and base
//! RTT) with what a user checks beside it: each link direction's egress port (a switch's
//! buffer, scheduler, ECN and shaper; a host's qdisc), each flow's scenario entry and the path
//! its ACKs take (ECMP may pick another equal-cost one).

use pyo3::prelude::*;
use serde_json::{Value, json};

use burstlab_sim::host::fq::FqSpec;
use burstlab_sim::net::graph::{DirSpec, NodeKind, NodeSpec};
use burstlab_sim::net::port::PortId;
use burstlab_sim::net::topology::Network;
use burstlab_sim::scenario::Scenario;
use burstlab_sim::units::Rate;

use crate::error::scenario_error;
use crate::scenario_json;

/// Load and validate a scenario (with its overrides) and return its expanded graph as JSON;
/// raises `burstlab.errors.ScenarioError` for a bad scenario or graph.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
pub fn graph_view(py: Python<'_>, text: &str, overrides: Vec<String>) -> PyResult<String> {
    let text = text.to_owned();
    // A large fabric takes a moment to route; other Python threads keep running meanwhile.
    let scenario = py
        .detach(|| burstlab_sim::scenario::load(&text, &overrides))
        .map_err(|e| scenario_error(py, &e))?;
    Ok(py.detach(|| to_json(&scenario)).to_string())
}

fn to_json(s: &Scenario) -> Value {
    let topology = s.graph();
    let graph = &topology.graph;
    let net = s.network();
    let mut view = serde_json::to_value(s.graph_view()).expect("a graph view serializes");

    // Link l drives port 2l (a to b) and 2l + 1 (b to a): net::graph's numbering.
    let links = view["links"].as_array_mut().expect("links is an array");
    for (l, (link, spec)) in links.iter_mut().zip(&graph.links).enumerate() {
        let from = |name: &str| graph.nodes.iter().find(|n| n.name == name).expect("linked node");
        let port = |p: usize| net.ports[p].name.clone();
        // A host's NIC rate, where set, is what its egress port serializes at.
        let nic = |name: &str| topology.nic_rates.iter().find(|(n, _)| n == name).map(|r| r.1);
        link["ab"] = direction(port(2 * l), from(&spec.a), &spec.ab, nic(&spec.a), spec.rate);
        link["ba"] = direction(port(2 * l + 1), from(&spec.b), &spec.ba, nic(&spec.b), spec.rate);
    }
    let entries = topology.tcp.iter().chain(&topology.udp);
    let flows = view["flows"].as_array_mut().expect("flows is an array");
    for (f, (flow, attach)) in flows.iter_mut().zip(entries).enumerate() {
        let entry = attach.field.strip_prefix("scenario.").unwrap_or(&attach.field);
        flow["entry"] = json!(entry);
        let reverse = &net.routes[f].1.reverse;
        flow["ack_path"] =
            if reverse.is_empty() { Value::Null } else { json!(path_names(&net, reverse)) };
    }
    json!({
        "scenario": s.name,
        "preset": s.topology.preset.name(),
        "mtu_bytes": graph.mtu,
        "nodes": view["nodes"],
        "links": view["links"],
        "flows": view["flows"],
    })
}

/// One link direction's egress port: a host's qdisc (its queue is bounded by TCP Small Queues,
/// not bytes) and NIC rate (`nic_binds`: below the link's), or a switch port's queues,
/// scheduler, ECN marking and shaper.
fn direction(port: String, from: &NodeSpec, dir: &DirSpec, nic: Option<Rate>, link: Rate) -> Value {
    match from.kind {
        NodeKind::Host => json!({
            "port": port,
            "qdisc": if from.fq.is_some() { "fq" } else { "pfifo_fast" },
            "fq": from.fq.as_ref().map(fq),
            "buffer_bytes": Value::Null,
            "recorded": false,
            "nic_rate_bps": nic.map(|r| r.bps()),
            "nic_binds": nic.is_some_and(|r| r < link),
        }),
        NodeKind::Switch => {
            let p = &dir.port;
            // A shaped port's buffer is tbf's limit (net::queue::PortSpec::shaper).
            let buffer = match &p.shaper {
                Some(tbf) => tbf.limit_bytes,
                None => p.queues.iter().map(|q| q.buffer_bytes).sum(),
            };
            let mut v = scenario_json::port(p);
            v["port"] = json!(port);
            v["buffer_bytes"] = json!(buffer);
            v["recorded"] = json!(dir.recorded);
            v
        }
    }
}

fn fq(f: &FqSpec) -> Value {
    json!({
        "quantum_bytes": f.quantum,
        "initial_quantum_bytes": f.initial_quantum,
        "flow_limit": f.flow_limit,
        "limit": f.limit,
        "maxrate_bytes_per_s": f.maxrate,
    })
}

/// Node names along `ports`, from the first port's node.
fn path_names(net: &Network, ports: &[PortId]) -> Vec<String> {
    let name = |n: u32| net.nodes[n as usize].name.clone();
    let first = net.ports[ports[0] as usize].node;
    std::iter::once(name(first))
        .chain(ports.iter().map(|&p| name(net.ports[p as usize].peer)))
        .collect()
}
