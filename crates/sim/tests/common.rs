//! Scenario builders shared by the integration tests.
#![allow(dead_code)]

use burstlab_sim::scenario::*;
use burstlab_sim::{Rate, Time};

pub fn flow(cca: &str, size: Option<u64>) -> FlowSpec {
    FlowSpec {
        cca: cca.into(),
        size_bytes: size,
        start: Time::ZERO,
        tcp_rmem: [4096, 131072, 6291456],
        tcp_wmem: [4096, 16384, 4194304],
        rmem_max: 212992,
        window_model: WindowModel::AdvWinScale(1),
        initcwnd: 10,
        initrwnd: 0,
        rto_min: Time::from_ms(200),
        quickack: false,
        ecn: false,
        hz: 250,
        dscp: 0,
        max_pacing_rate: None,
        gso_max_size: 65536,
        qdisc: HostQdisc::PfifoFast,
    }
}

pub fn fifo(buffer: u64) -> PortSpec {
    PortSpec {
        scheduler: Scheduler::Fifo,
        queues: vec![QueueSpec { buffer_bytes: buffer, quantum_bytes: 9000, dscp: vec![], flows: vec![], ecn: None }],
        shaper: None,
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
            bottleneck_rate: rate,
            host_rate: rate,
            burst_link_rate: rate,
            rtt,
            mtu,
            bottleneck: fifo(buffer),
        },
        flows,
        incasts: vec![],
        bursts: vec![],
    }
}
