//! Telemetry Report headers (TR v0.5 spec and fabric-tna, v1.0, v2.0, bmv2 INT-MX's TR v2.0
//! under nibble 1) from arbitrary bytes:
//! `parse_reports` returns a value or a `DecodeError` and never panics; what it returns stays
//! inside the payload, and every header it returns encodes to bytes it reads back.
#![no_main]

use burstlab_telemetry::profile::{DeviceProfile, FlagLayout};
use burstlab_telemetry::profiles::fabric_tna;
use burstlab_telemetry::report::{encode_report, parse_reports};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the device profile; the rest is the report UDP payload.
    let Some((&selector, payload)) = data.split_first() else { return };
    let profile = match selector % 5 {
        0 => DeviceProfile::spec(),
        1 => DeviceProfile::noviflow(),
        2 => fabric_tna(),
        3 => DeviceProfile::bmv2_int_mx(),
        _ => DeviceProfile { flag_layout: FlagLayout::DqfBeforeReserved, ..DeviceProfile::spec() },
    };
    match parse_reports(payload, &profile) {
        Ok(headers) => {
            assert!(headers.len() <= payload.len() / 4);
            for h in headers {
                let inner = match &h.inner {
                    Some((_, r)) => &payload[r.clone()],
                    None => &[][..],
                };
                let mut again = Vec::new();
                encode_report(&h, inner, &profile, &mut again);
                parse_reports(&again, &profile).expect("an encoded header parses");
            }
        }
        Err(e) => assert!(e.offset <= payload.len()),
    }
});
