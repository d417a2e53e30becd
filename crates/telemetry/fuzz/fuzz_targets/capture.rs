//! Any bytes as a capture file: read every frame, decode every packet, mark TCP, and rebuild a
//! queue from the packets of interface 0 (entering) and 1 (leaving). Nothing may panic.
#![no_main]

use burstlab_telemetry::capture::{CaptureReader, TcpMarker, parse_packet, reconstruct_queue};
use burstlab_telemetry::observation::QueueKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = CaptureReader::new(data) else {
        return;
    };
    let mut marker = TcpMarker::new();
    let (mut entering, mut leaving) = (Vec::new(), Vec::new());
    while let Some(frame) = reader.next() {
        let Ok(frame) = frame else { break };
        let Ok(rec) = parse_packet(&frame) else {
            continue;
        };
        marker.observe(&rec);
        if rec.interface == 0 {
            entering.push(rec)
        } else {
            leaving.push(rec)
        }
    }
    let key = QueueKey {
        switch_id: 0,
        port: 0,
        queue_id: 0,
    };
    let trace = reconstruct_queue(entering, leaving, key, 1_000_000);
    assert!(
        trace
            .observations
            .windows(2)
            .all(|w| w[0].t_ns <= w[1].t_ns)
    );
});
