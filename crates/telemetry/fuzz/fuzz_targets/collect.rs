//! The live collector from arbitrary datagrams: `Collector::ingest` (decode, the stream and flow
//! caps, observe, detect), with ended bursts taken as a live collector takes them. Any bytes
//! are counted, never fatal; the tracked queues and flows stay under their caps; every burst is
//! well formed.
#![no_main]

use burstlab_telemetry::collect::{CollectOptions, Collector};
use burstlab_telemetry::decode::Decoder;
use burstlab_telemetry::detect::hysteresis::HysteresisParams;
use burstlab_telemetry::profile::DEFAULT_REPORT_PORTS;
use burstlab_telemetry::profiles::Profiles;
use libfuzzer_sys::fuzz_target;

const MAX_QUEUES: usize = 8;
const MAX_FLOWS: usize = 16;

fuzz_target!(|data: &[u8]| {
    // Byte 0 picks the port (and so the profile); then datagrams, each after one length byte.
    let Some((&selector, mut rest)) = data.split_first() else { return };
    let port = DEFAULT_REPORT_PORTS[selector as usize % DEFAULT_REPORT_PORTS.len()];
    let opts = CollectOptions {
        hysteresis: HysteresisParams::fixed(1_000, 500, 0, 100),
        top_k: 3,
        max_queues: MAX_QUEUES,
        max_flows: MAX_FLOWS,
        report_sample: 2,
    };
    let mut c = Collector::new(Decoder::new(Profiles::builtin()), opts);
    let mut bursts = Vec::new();
    let mut datagrams = 0;
    while let Some((&len, tail)) = rest.split_first() {
        let (payload, next) = tail.split_at((len as usize).min(tail.len()));
        rest = next;
        c.ingest(payload, port, datagrams);
        datagrams += 1;
        if datagrams % 7 == 0 {
            bursts.extend(c.take_batch().bursts);
        }
    }
    bursts.extend(c.finish().bursts);
    let n = c.counters();
    assert_eq!(n.datagrams, datagrams);
    assert!(n.malformed <= n.datagrams);
    assert!(c.take_gauges().len() <= MAX_QUEUES);
    assert!(n.flows as usize <= MAX_FLOWS);
    assert_eq!(n.bursts as usize, bursts.len());
    for b in bursts {
        assert!(b.start_ns <= b.peak_ns && b.peak_ns <= b.end_ns);
    }
});
