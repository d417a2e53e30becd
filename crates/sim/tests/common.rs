//! Scenario builders shared by the integration tests.
#![allow(dead_code)]

use burstlab_sim::scenario::*;
use burstlab_sim::{Rate, Time};

pub fn flow(cca: &str, size: Option<u64>) -> FlowSpec {
    FlowSpec {
        size_bytes: size,
        window_model: WindowModel::AdvWinScale(1),
        ..FlowSpec::linux_default(cca)
    }
}

pub fn fifo(buffer: u64) -> PortSpec {
    PortSpec {
        scheduler: Scheduler::Fifo,
        queues: vec![QueueSpec {
            buffer_bytes: buffer,
            quantum_bytes: 9000,
            dscp: vec![],
            flows: vec![],
            ecn: None,
        }],
        shaper: None,
        pauses: vec![],
    }
}

pub fn dumbbell(rate: Rate, rtt: Time, buffer: u64, mtu: u32, flows: Vec<FlowSpec>) -> Scenario {
    Scenario {
        name: "test".into(),
        seed: 1,
        stop: Time::from_secs(60),
        interval: Time::from_secs(1),
        topology: Topology {
            preset: Preset::Dumbbell,
            dumbbell: Dumbbell {
                bottleneck_rate: rate,
                host_rate: rate,
                burst_link_rate: rate,
                rtt,
                mtu,
                // Analytic windows and rates assume exact link clocks.
                clock_ppm: 0.0,
                veth: false,
                bottleneck: fifo(buffer),
            },
            graph: None,
        },
        flows,
        streams: vec![],
        incasts: vec![],
        websearches: vec![],
        bursts: vec![],
        telemetry: Telemetry::default(),
        memory_budget: burstlab_sim::scenario::budget::machine_budget().bytes,
    }
}

/// Run flow `f` alone through a 1 Gbit/s, 100 µs, 1 MiB dumbbell until `stop`: the path of the
/// host-behaviour tests (slow reader, late handshake), where only the hosts differ.
pub fn run_on_1g_path(f: FlowSpec, stop: Time) -> burstlab_sim::record::Output {
    let mut s = dumbbell(Rate::from_gbps(1), Time::from_us(100), 1 << 20, 1500, vec![f]);
    s.stop = stop;
    burstlab_sim::run(&s)
}

/// The scenario of TOML `text`, which must load.
pub fn load(text: &str) -> Scenario {
    burstlab_sim::scenario::load(text, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The loader's refusal of `text`, which must be one line.
pub fn refusal(text: &str) -> String {
    match burstlab_sim::scenario::load(text, &[]) {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            let m = e.to_string();
            assert!(!m.contains('\n'), "one line: {m}");
            m
        }
    }
}
