//! TCP as Linux runs it: a sender ([`sender`]) and a receiver ([`receiver`]) per flow, the SACK
//! scoreboard and RACK ([`scoreboard`]), RTT/RTO ([`rtt`]), the receive window ([`rwnd`]),
//! congestion control ([`cc`]), when their timers fire ([`timer_wheel`]) and the skbs the
//! application's bytes are queued in ([`write_queue`]).

pub mod cc;
pub mod config;
pub mod receiver;
pub mod rtt;
pub mod rwnd;
pub mod scoreboard;
pub mod sender;
pub mod timer_wheel;
pub mod write_queue;

use crate::packet::{IPV4_HEADER_BYTES, TCP_HEADER_BYTES, TCP_TIMESTAMP_OPTION_BYTES};
use crate::time::Time;

/// `TCP_INIT_CWND` (`include/net/tcp.h`), RFC 6928 §2: 10 segments, the initial congestion
/// window without a route `initcwnd`; `tcp_init_buffer_space()` also starts DRS from it.
pub const TCP_INIT_CWND: u32 = 10;

/// `MAX_SKB_FRAGS` (`include/linux/skbuff.h`, `CONFIG_MAX_SKB_FRAGS` default 17): the page
/// fragments one skb holds. veth hands TCP each segment's payload as one fragment, so a
/// receiver's coalesced skbs (`tcp_add_backlog()`, `tcp_try_coalesce()`) hold at most this many
/// segments (traced here at 1500 bytes: 16–18, a few more when the first one's payload sits in
/// the skb's head).
pub const MAX_SKB_FRAGS: usize = 17;

/// One tick of RFC 7323 timestamps as Linux sends them: `TCP_TS_HZ` = 1000 (`include/net/tcp.h`;
/// microsecond TSvals only with the route's `tcp_usec_ts` feature, 6.7+).
pub const TCP_TS_TICK: Time = Time::from_ms(1);

/// IP + TCP header bytes on every segment with the timestamps option: 52.
#[inline]
pub const fn header_bytes() -> u32 {
    IPV4_HEADER_BYTES + TCP_HEADER_BYTES + TCP_TIMESTAMP_OPTION_BYTES
}

/// MSS = MTU − 52 with timestamps (Linux `tcp_mtu_to_mss()` minus `TCPOLEN_TSTAMP_ALIGNED`);
/// 8948 at MTU 9000, 1448 at 1500.
#[inline]
pub const fn mss_from_mtu(mtu: u32) -> u32 {
    mtu - header_bytes()
}

/// A SYN with MSS, SACK-permitted, timestamps and window-scale options: 20 + 20 + 20 = 60 bytes
/// (Linux `tcp_syn_options()`).
pub const SYN_BYTES: u32 = 60;

/// A pure ACK: headers, timestamps, and 2 + 8·n bytes of SACK option padded by two NOPs.
#[inline]
pub const fn ack_bytes(sack_blocks: u32) -> u32 {
    header_bytes() + if sack_blocks > 0 { 4 + 8 * sack_blocks } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_cwnd_is_ten() {
        assert_eq!(TCP_INIT_CWND, 10);
    }

    #[test]
    fn skbs_hold_17_fragments_and_timestamps_tick_each_millisecond() {
        assert_eq!(MAX_SKB_FRAGS, 17);
        assert_eq!(TCP_TS_TICK, Time::from_ms(1));
    }

    #[test]
    fn mss_is_mtu_minus_52_with_timestamps() {
        assert_eq!(mss_from_mtu(9000), 8948);
        assert_eq!(mss_from_mtu(1500), 1448);
    }

    #[test]
    fn ack_with_three_sack_blocks_fits_40_option_bytes() {
        // 12 (timestamps) + 28 (NOP NOP + 3 blocks) = 40, the TCP option maximum (RFC 9293).
        assert_eq!(ack_bytes(3) - header_bytes() + TCP_TIMESTAMP_OPTION_BYTES, 40);
    }
}
