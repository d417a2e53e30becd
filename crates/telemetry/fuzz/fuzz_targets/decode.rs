//! The collector path from arbitrary report payloads: `Decoder` (report headers + the reported
//! packet's INT stack, profile per port), `Observer` (timestamps unwrapped per switch) and the
//! hysteresis `Detector`. Any bytes give reports or a `DecodeError`; nothing panics; every
//! burst is well formed.
#![no_main]

use burstlab_telemetry::decode::Decoder;
use burstlab_telemetry::detect::hysteresis::{Detector, HysteresisParams};
use burstlab_telemetry::observe::Observer;
use burstlab_telemetry::profile::DEFAULT_REPORT_PORTS;
use burstlab_telemetry::profiles::Profiles;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Byte 0 picks the report port (and so the profile); the rest is a sequence of payloads,
    // each prefixed by one length byte, as a collector would receive them.
    let Some((&selector, mut rest)) = data.split_first() else { return };
    let port = DEFAULT_REPORT_PORTS[selector as usize % DEFAULT_REPORT_PORTS.len()];
    let mut decoder = Decoder::new(Profiles::builtin());
    let mut observer = Observer::default();
    let params = HysteresisParams::fixed(1_000, 500, 0, 100);
    let mut detector = Detector::new(params);
    let mut observations = Vec::new();
    while let Some((&len, tail)) = rest.split_first() {
        let (payload, next) = tail.split_at((len as usize).min(tail.len()));
        rest = next;
        match decoder.decode(payload, port) {
            Ok(reports) => {
                observations.clear();
                for r in reports {
                    observer.push(r, &mut observations);
                }
                for o in &observations {
                    detector.push(o);
                }
            }
            // A truncated field may be named at the offset where it would have started, past the
            // end; the message must still render.
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    for b in detector.finish() {
        assert!(b.start_ns <= b.peak_ns && b.peak_ns <= b.end_ns);
        assert!(b.peak_bytes >= params.thresholds(0).rise_bytes);
    }
});
