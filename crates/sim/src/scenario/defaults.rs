//! Defaults and bounds of scenario fields: Linux's where the field is a Linux setting, with the
//! source of each; burstlab's own choices say so.

use crate::time::Time;

pub use crate::tcp::config::{
    DEFAULT_CCA, DEFAULT_HZ, DEFAULT_RMEM_MAX, DEFAULT_TCP_RMEM, DEFAULT_TCP_WMEM,
};

/// Smallest element of `tcp_rmem`/`tcp_wmem`: the sysctl table (`net/ipv4/sysctl_net_ipv4.c`)
/// has `.extra1 = SYSCTL_ONE` for both.
pub const TCP_MEM_MIN: u64 = 1;

/// Bounds of `net.ipv4.tcp_adv_win_scale`: `tcp_adv_win_scale_min`/`_max`
/// (`net/ipv4/sysctl_net_ipv4.c`); 0 is allowed and means window = space.
pub const TCP_ADV_WIN_SCALE_RANGE: std::ops::RangeInclusive<i64> = -31..=31;

/// `tp->scaling_ratio` is a `u8` (`include/linux/tcp.h`); 0 would advertise no window.
pub const SCALING_RATIO_RANGE: std::ops::RangeInclusive<i64> = 1..=255;

// Linux constants that are also defaults here live with the code that implements them.
pub use crate::tcp::cc::GSO_MAX_SIZE;

/// BIG TCP's largest GSO size, 512 KiB (`GSO_MAX_SIZE` with BIG TCP, `include/linux/netdevice.h`).
pub const BIG_TCP_MAX_SIZE: u64 = 512 * 1024;
/// A GSO size below one jumbo frame would make every burst a single segment: refuse it.
pub const MIN_GSO_MAX_SIZE: u64 = 9000;
pub use crate::tcp::TCP_INIT_CWND;
pub use crate::tcp::rtt::TCP_RTO_MIN;
pub use crate::tcp::rwnd::SYSCTL_INT_MAX;

/// The `CONFIG_HZ` choices of `kernel/Kconfig.hz`.
pub const HZ_CHOICES: &[i64] = &[100, 250, 300, 1000];

/// RFC 791 §3.1: every destination must accept a 576-octet datagram; burstlab refuses smaller
/// MTUs (Linux accepts down to `IPV4_MIN_MTU` = 68).
pub const MIN_MTU: u32 = 576;

/// RFC 791 §3.1: Total Length is 16 bits.
pub const MAX_MTU: u32 = 65_535;

/// Default IP MTU of Ethernet, RFC 894.
pub const DEFAULT_MTU: u32 = 1500;

/// Burst sources' clock offset bound (ppm): the default and the largest accepted.
pub use crate::app::burst::{
    DEFAULT_CLOCK_PPM as DEFAULT_BURST_CLOCK_PPM, MAX_CLOCK_PPM as MAX_BURST_CLOCK_PPM,
};

/// Ports' (host NICs and switch egress) clock offset bound (ppm): the default and the largest
/// accepted.
pub use crate::net::clock::{DEFAULT_PORT_CLOCK_PPM, MAX_PORT_CLOCK_PPM};

/// Smallest burst datagram: IPv4 header (20, RFC 791 §3.1) + UDP header (8, RFC 768).
pub const MIN_BURST_PACKET: u32 = 28;

/// DSCP is 6 bits (RFC 2474 §3).
pub const DSCP_RANGE: std::ops::RangeInclusive<i64> = 0..=63;

/// burstlab's choice: a deep-buffer switch port (16 MiB), so defaults do not drop by accident.
pub const DEFAULT_BUFFER: u64 = 16 << 20;

/// burstlab's choice: one simulated minute.
pub const DEFAULT_STOP: Time = Time::from_secs(60);

/// iperf3's default report interval (`-i 1`).
pub const DEFAULT_INTERVAL: Time = Time::from_secs(1);

/// Shortest interval: below 1 ms the intervals table outgrows the run it describes.
pub const MIN_INTERVAL: Time = Time::from_ms(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_sysctl_defaults() {
        assert_eq!(DEFAULT_TCP_RMEM, [4096, 131_072, 6 << 20]);
        assert_eq!(DEFAULT_TCP_WMEM, [4096, 16 << 10, 4 << 20]);
        assert_eq!(DEFAULT_RMEM_MAX, 256 * 832);
        assert_eq!(SYSCTL_INT_MAX, i32::MAX as u64);
        assert_eq!(TCP_MEM_MIN, 1);
    }

    #[test]
    fn linux_tcp_constants() {
        assert_eq!(TCP_INIT_CWND, 10);
        assert_eq!(DEFAULT_CCA, "cubic");
        assert!(crate::tcp::cc::names().any(|n| n == DEFAULT_CCA));
        assert_eq!(TCP_RTO_MIN, Time::from_secs(1) / 5);
        assert_eq!(TCP_ADV_WIN_SCALE_RANGE, -31..=31);
        assert_eq!(SCALING_RATIO_RANGE, 1..=i64::from(u8::MAX));
        assert!(HZ_CHOICES.contains(&i64::from(DEFAULT_HZ)));
        assert_eq!(HZ_CHOICES, &[100, 250, 300, 1000]);
    }

    #[test]
    fn ip_limits() {
        assert_eq!(MIN_MTU, 576);
        assert_eq!(MAX_MTU, u32::from(u16::MAX));
        assert_eq!(DEFAULT_MTU, 1500);
        assert_eq!(MIN_BURST_PACKET, 20 + 8);
        assert_eq!(DSCP_RANGE, 0..=63);
    }

    #[test]
    fn burstlab_defaults_hold_one_max_packet() {
        assert!(DEFAULT_BUFFER >= u64::from(MAX_MTU));
        assert_eq!(DEFAULT_INTERVAL, Time::from_ms(1000));
        assert!(MIN_INTERVAL <= DEFAULT_INTERVAL && DEFAULT_INTERVAL <= DEFAULT_STOP);
    }
}
