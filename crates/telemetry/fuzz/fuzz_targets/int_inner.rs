//! Arbitrary bytes into `parse_inner`, as every inner kind and under every INT presence rule:
//! a value or a `DecodeError`, never a panic.
#![no_main]

use burstlab_telemetry::int::parse_inner;
use burstlab_telemetry::model::InnerKind;
use burstlab_telemetry::profile::{DeviceProfile, IntDetect};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let marked = DeviceProfile {
        int_detect: IntDetect::Dscp { value: 0x17, mask: 0x3F },
        timestamp_bytes: 8,
        ..DeviceProfile::noviflow()
    };
    for profile in
        [DeviceProfile::noviflow(), DeviceProfile::spec(), marked, DeviceProfile::bmv2_int_mx()]
    {
        for kind in [InnerKind::Ethernet, InnerKind::Ipv4, InnerKind::Ipv6] {
            if let Err(e) = parse_inner(data, kind, &profile) {
                // Offsets name a byte of the input or the first one past what was needed.
                assert!(e.offset <= data.len() + 4 * 256, "{e}");
            }
        }
    }
});
