//! The normalised scenario as JSON, for `load_scenario`: what the simulator will actually run
//! after defaults and `--set` overrides, in edge units named like the record columns (`_s`
//! seconds, `_bps` bits per second, `_bytes`). Written here rather than derived in the sim
//! crate so the engine's types stay free of presentation concerns.

use serde_json::{Value, json};

use burstlab_sim::scenario::{
    BurstSpec, EcnMode, FlowSpec, HostQdisc, Latency, PortSpec, Preset, QueueSpec, RcvBufTuning,
    Scenario, Scheduler, SlopeForm, Timers, WindowModel,
};

pub fn to_json(s: &Scenario) -> Value {
    let t = &s.topology.dumbbell;
    json!({
        "name": s.name,
        "seed": s.seed,
        "stop_s": s.stop.as_secs_f64(),
        "interval_s": s.interval.as_secs_f64(),
        "topology": {
            "preset": preset(s.topology.preset),
            "bottleneck_rate_bps": t.bottleneck_rate.bps(),
            "host_rate_bps": t.host_rate.bps(),
            "burst_link_rate_bps": t.burst_link_rate.bps(),
            "rtt_s": t.rtt.as_secs_f64(),
            "mtu_bytes": t.mtu,
            "clock_ppm": t.clock_ppm,
            "veth": t.veth,
            "bottleneck": port(&t.bottleneck),
        },
        "flows": s.flows.iter().map(flow).collect::<Vec<_>>(),
        "streams": s.streams,
        "incasts": s.incasts.iter().map(|i| json!({
            "senders": i.senders,
            "query_bytes": i.query_bytes,
            "queries": i.queries,
            "start_s": i.start.as_secs_f64(),
            "gap_s": i.gap.as_secs_f64(),
            "serve_time_s": latency(&i.serve_time),
            "one_sender_host": i.one_sender_host,
            "tcp": flow(&i.tcp),
        })).collect::<Vec<_>>(),
        "bursts": s.bursts.iter().map(burst).collect::<Vec<_>>(),
        "telemetry": {
            "int_ports": s.telemetry.int_ports.iter()
                .map(|p| json!({ "node": p.node, "port": p.port }))
                .collect::<Vec<_>>(),
            "int_sample": s.telemetry.int_sample,
        },
    })
}

fn preset(p: Preset) -> &'static str {
    p.name()
}

pub(crate) fn port(p: &PortSpec) -> Value {
    let scheduler = match p.scheduler {
        Scheduler::Fifo => "fifo",
        Scheduler::Strict => "strict",
        Scheduler::Drr => "drr",
    };
    let shaper = p.shaper.as_ref().map(|t| {
        json!({
            "rate_bps": t.rate.bps(),
            "burst_bytes": t.burst_bytes,
            "limit_bytes": t.limit_bytes,
            "watchdog_latency_s": latency(&t.watchdog_latency),
        })
    });
    json!({
        "scheduler": scheduler,
        "queues": p.queues.iter().map(queue).collect::<Vec<_>>(),
        "tbf": shaper,
        "pauses_s": p.pauses.iter().map(|x| [x.start.as_secs_f64(), x.end.as_secs_f64()]).collect::<Vec<_>>(),
    })
}

fn queue(q: &QueueSpec) -> Value {
    let ecn = q.ecn.map(|e| {
        let mode = match e.mode {
            EcnMode::Enqueue => "enqueue",
            EcnMode::Dequeue => "dequeue",
            EcnMode::Slope(SlopeForm::Probabilistic { .. }) => "s-ecn",
            EcnMode::Slope(SlopeForm::Hardware) => "s-ecn-hardware",
        };
        json!({ "threshold_bytes": e.threshold_bytes, "mode": mode })
    });
    json!({
        "buffer_bytes": q.buffer_bytes,
        "quantum_bytes": q.quantum_bytes,
        "dscp": q.dscp,
        "flows": q.flows,
        "ecn": ecn,
    })
}

fn flow(f: &FlowSpec) -> Value {
    let window_model = match f.window_model {
        WindowModel::AdvWinScale(v) => json!({ "tcp_adv_win_scale": v }),
        WindowModel::ScalingRatio(v) => json!({ "scaling_ratio": v }),
    };
    json!({
        "cca": f.cca,
        "size_bytes": f.size_bytes,
        "start_s": f.start.as_secs_f64(),
        "tcp_rmem": f.tcp_rmem,
        "tcp_wmem": f.tcp_wmem,
        "rmem_max": f.rmem_max,
        "window_model": window_model,
        "skb_scaling_ratio": f.skb_scaling_ratio,
        "rcvbuf_tuning": match f.rcvbuf_tuning {
            RcvBufTuning::Linux6_6 => "6.6",
            RcvBufTuning::Linux6_18 => "6.18",
        },
        "initcwnd": f.initcwnd,
        "initrwnd": f.initrwnd,
        "rto_min_s": f.rto_min.as_secs_f64(),
        "quickack": f.quickack,
        "ecn": f.ecn,
        "hz": f.hz,
        "dctcp_shift_g": f.dctcp_shift_g,
        "timers": match f.timers {
            Timers::Exact => "exact",
            Timers::Jiffies => "jiffies",
        },
        "read_latency_s": latency(&f.read_latency),
        "first_read_latency_s": f.first_read_latency.map(|t| t.as_secs_f64()),
        "read_hold_s": latency(&f.read_hold),
        "handshake_latency_s": latency(&f.handshake_latency),
        "pacing_latency_s": latency(&f.pacing_latency),
        "rx_coalesce_s": latency(&f.rx_coalesce),
        "dscp": f.dscp,
        "max_pacing_rate_bps": f.max_pacing_rate.map(|r| r.bps()),
        "gso_max_size_bytes": f.gso_max_size,
        "nic_rate_bps": f.nic_rate.map(|r| r.bps()),
        "qdisc": match &f.qdisc {
            HostQdisc::PfifoFast => json!({ "kind": "pfifo_fast" }),
            HostQdisc::Fq(p) => json!({
                "kind": "fq",
                "maxrate_bytes_per_s": p.maxrate_bytes_per_s,
                "flow_limit": p.flow_limit,
                "quantum_bytes": p.quantum,
            }),
        },
    })
}

/// Seconds: one number when fixed, `{"exponential_mean": s}`, or the list drawn from.
fn latency(l: &Latency) -> Value {
    match l {
        Latency::Fixed(t) => json!(t.as_secs_f64()),
        Latency::Exponential(mean) => json!({ "exponential_mean": mean.as_secs_f64() }),
        Latency::Samples(v) => json!(v.iter().map(|t| t.as_secs_f64()).collect::<Vec<_>>()),
    }
}

fn burst(b: &BurstSpec) -> Value {
    json!({
        "sources": b.sources,
        "rate_bps": b.rate.bps(),
        "start_s": b.start.as_secs_f64(),
        "duration_s": b.duration.as_secs_f64(),
        "packet_size_bytes": b.packet_size,
        "dscp": b.dscp,
        "jitter_s": b.jitter.as_secs_f64(),
        "clock_ppm": b.clock_ppm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use burstlab_sim::scenario::{Dumbbell, EcnSpec, Topology};
    use burstlab_sim::{Rate, Time};

    fn scenario() -> Scenario {
        Scenario {
            name: "amlight".into(),
            seed: 7,
            stop: Time::from_secs(30),
            interval: Time::from_ms(100),
            topology: Topology {
                preset: Preset::Dumbbell,
                dumbbell: Dumbbell {
                    bottleneck_rate: Rate::from_gbps(100),
                    host_rate: Rate::from_gbps(100),
                    burst_link_rate: Rate::from_gbps(25),
                    rtt: Time::from_ms(209),
                    mtu: 9000,
                    clock_ppm: 20.0,
                    veth: false,
                    bottleneck: PortSpec {
                        scheduler: Scheduler::Drr,
                        queues: vec![QueueSpec {
                            buffer_bytes: 1 << 20,
                            quantum_bytes: 9000,
                            dscp: vec![46],
                            flows: vec![0],
                            ecn: Some(EcnSpec { threshold_bytes: 65_000, mode: EcnMode::Dequeue }),
                        }],
                        shaper: None,
                        pauses: vec![],
                    },
                },
                graph: None,
            },
            flows: vec![FlowSpec {
                size_bytes: Some(13 << 30),
                start: Time::from_ms(5),
                window_model: WindowModel::AdvWinScale(1),
                ecn: true,
                hz: 1000,
                ..FlowSpec::linux_default("cubic")
            }],
            streams: vec![1],
            incasts: vec![],
            websearches: vec![],
            bursts: vec![BurstSpec {
                sources: 4,
                rate: Rate::from_gbps(25),
                start: Time::from_secs(10),
                duration: Time::from_ms(100),
                packet_size: 1500,
                dscp: 0,
                jitter: Time::ZERO,
                clock_ppm: 0.0,
            }],
            telemetry: burstlab_sim::scenario::Telemetry::default(),
            memory_budget: 1 << 30,
        }
    }

    #[test]
    fn normalised_times_are_seconds_and_rates_bps() {
        let v = to_json(&scenario());
        assert_eq!(v["topology"]["rtt_s"], json!(0.209));
        assert_eq!(v["interval_s"], json!(0.1));
        assert_eq!(v["topology"]["burst_link_rate_bps"], json!(25_000_000_000u64));
        assert_eq!(v["topology"]["clock_ppm"], json!(20.0));
        assert_eq!(v["bursts"][0]["duration_s"], json!(0.1));
        assert_eq!(v["flows"][0]["rto_min_s"], json!(0.2));
        assert_eq!(v["flows"][0]["size_bytes"], json!(13u64 << 30));
    }

    #[test]
    fn normalised_enums_are_lowercase_names() {
        let v = to_json(&scenario());
        assert_eq!(v["topology"]["preset"], "dumbbell");
        assert_eq!(v["topology"]["bottleneck"]["scheduler"], "drr");
        assert_eq!(v["topology"]["bottleneck"]["queues"][0]["ecn"]["mode"], "dequeue");
        assert_eq!(v["flows"][0]["window_model"], json!({ "tcp_adv_win_scale": 1 }));
    }

    #[test]
    fn telemetry_lists_the_int_ports() {
        let mut s = scenario();
        assert_eq!(to_json(&s)["telemetry"]["int_ports"], json!([]));
        s.telemetry.int_ports =
            vec![burstlab_sim::scenario::IntPort { node: "swA".into(), port: "swA->swB".into() }];
        let v = to_json(&s);
        assert_eq!(v["telemetry"]["int_ports"], json!([{ "node": "swA", "port": "swA->swB" }]));
        assert_eq!(v["telemetry"]["int_sample"], json!(1));
    }

    #[test]
    fn unbounded_flow_size_is_null() {
        let mut s = scenario();
        s.flows[0].size_bytes = None;
        s.topology.dumbbell.bottleneck.queues[0].ecn = None;
        let v = to_json(&s);
        assert!(v["flows"][0]["size_bytes"].is_null());
        assert!(v["topology"]["bottleneck"]["queues"][0]["ecn"].is_null());
    }
}
