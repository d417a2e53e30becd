//! When a TCP timer armed at some moment really fires, on Linux's jiffy timer wheel
//! (`kernel/time/timer.c`).
//!
//! TCP's retransmit, loss-probe, RACK-reorder and delayed-ACK timers are `timer_list` timers:
//! the timeout is converted to whole jiffies rounding up (`usecs_to_jiffies()`), added to the
//! current jiffy, and the wheel files the timer in a bucket that ends *after* that expiry —
//! `calc_index()` rounds up by one bucket "to guarantee that a timer does not fire early" when
//! it is armed at the edge of a tick. A 1-jiffy loss probe at HZ = 250 therefore fires 4–8 ms
//! after it was armed, never sooner, and every socket's timers fire together on the ticks.
//! An ftrace of this machine's kernel (6.18, HZ = 250) shows `bucket_expiry = expires + 1` for
//! every `tcp_write_timer` below 63 jiffies and the expiry handler running at `expires + 1`.

use crate::time::Time;

/// `LVL_CLK_SHIFT` (`kernel/time/timer.c`): each wheel level is 8× coarser than the one below.
pub const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets per level.
pub const LVL_BITS: u32 = 6;
/// `LVL_DEPTH` at HZ ≤ 100 is 8, above it 9; 8 levels already span years at HZ = 250.
const LVL_DEPTH: u32 = 9;

/// `LVL_START(n)`: the first delta (in jiffies) that level `n` holds, `63 << 3·(n − 1)`.
const fn lvl_start(n: u32) -> u64 {
    ((1u64 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

/// One jiffy at `hz` ticks per second.
pub fn jiffy(hz: u32) -> Time {
    Time::from_ps(1_000_000_000_000 / hz as u64)
}

/// `t` in whole jiffies of `hz`, rounded up: what a route's `rto_min` becomes. The route keeps it
/// in ms and `tcp_rto_min()` reads it through `dst_metric_rtt()` = `msecs_to_jiffies()`
/// (`include/net/dst.h`: "RTT metrics are stored in milliseconds for user ABI, but used as
/// jiffies"), which rounds up; `tcp_rto_min_us()` turns the jiffies back into µs. At HZ = 250
/// `rto_min 5ms` is 2 jiffies, 8 ms.
pub fn round_up_to_jiffies(t: Time, hz: u32) -> Time {
    const PS_PER_S: u128 = 1_000_000_000_000;
    let jiffies = (t.ps() as u128 * hz as u128).div_ceil(PS_PER_S);
    Time::from_ps((jiffies * PS_PER_S / hz as u128) as u64)
}

/// The jiffy after which a timer armed at jiffy `now` with expiry `expires` runs:
/// `calc_wheel_index()` picks the level from `expires − now` and `calc_index()` rounds the
/// expiry up to the end of its bucket at that level.
pub fn bucket_expiry(now: u64, expires: u64) -> u64 {
    let delta = expires.saturating_sub(now);
    let lvl = (1..LVL_DEPTH).find(|&n| delta < lvl_start(n)).map_or(LVL_DEPTH - 1, |n| n - 1);
    let shift = lvl * LVL_CLK_SHIFT;
    ((expires >> shift) + 1) << shift
}

/// When a timer of `timeout` armed at `now` fires with `jiffy`-long ticks: whole jiffies rounded
/// up (`usecs_to_jiffies()`), then the wheel's bucket, on a tick. `jiffy = None` means exact
/// timers (`now + timeout`).
pub fn fires_at(now: Time, timeout: Time, jiffy: Option<Time>) -> Time {
    let Some(j) = jiffy else { return now + timeout };
    let j = j.ps();
    let current = now.ps() / j;
    let when = timeout.ps().div_ceil(j);
    Time::from_ps(bucket_expiry(current, current + when).saturating_mul(j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_constants_are_linuxs() {
        assert_eq!(LVL_CLK_SHIFT, 3);
        assert_eq!(LVL_BITS, 6);
        assert_eq!(lvl_start(1), 63);
        assert_eq!(lvl_start(2), 504);
    }

    #[test]
    fn route_rto_min_rounds_up_to_whole_jiffies() {
        // msecs_to_jiffies(5) at HZ = 250 is DIV_ROUND_UP(5, 4) = 2 jiffies: 8 ms.
        assert_eq!(round_up_to_jiffies(Time::from_ms(5), 250), Time::from_ms(8));
        assert_eq!(round_up_to_jiffies(Time::from_ms(4), 250), Time::from_ms(4));
        assert_eq!(round_up_to_jiffies(Time::from_ms(1), 1000), Time::from_ms(1));
        assert_eq!(round_up_to_jiffies(Time::from_ms(5), 100), Time::from_ms(10));
        // TCP_RTO_MIN = HZ/5 jiffies is 200 ms at every HZ, also where a jiffy is no whole ps.
        for hz in [100, 250, 300, 1000] {
            assert_eq!(round_up_to_jiffies(Time::from_ms(200), hz), Time::from_ms(200));
        }
    }

    #[test]
    fn level_zero_fires_one_tick_after_expiry() {
        // From this kernel's ftrace: timeout=1 → bucket_expiry = expires + 1; timeout=51 too.
        assert_eq!(bucket_expiry(4296741128, 4296741129), 4296741130);
        assert_eq!(bucket_expiry(1000, 1051), 1052);
    }

    #[test]
    fn level_one_rounds_to_eight_jiffies() {
        // From the same trace: timeout=250, expires=4296741378 → bucket_expiry=4296741384.
        assert_eq!(bucket_expiry(4296741378 - 250, 4296741378), 4296741384);
    }

    #[test]
    fn a_short_probe_fires_between_one_and_two_jiffies_later() {
        let j = jiffy(250);
        assert_eq!(j, Time::from_ms(4));
        // 2.5 ms → 1 jiffy; armed 0.1 ms or 3.9 ms into jiffy 10, it fires at the start of 12.
        for into in [Time::from_us(100), Time::from_us(3900)] {
            let now = Time::from_ms(40) + into;
            assert_eq!(fires_at(now, Time::from_us(2500), Some(j)), Time::from_ms(48));
        }
        // Exactly one jiffy is still one jiffy; a hair more is two.
        assert_eq!(fires_at(Time::from_ms(40), Time::from_ms(4), Some(j)), Time::from_ms(48));
        assert_eq!(fires_at(Time::from_ms(40), Time::from_us(4001), Some(j)), Time::from_ms(52));
    }

    #[test]
    fn exact_timers_fire_at_their_time() {
        assert_eq!(fires_at(Time::from_us(7), Time::from_us(2500), None), Time::from_us(2507));
    }

    #[test]
    fn a_zero_timeout_fires_on_the_next_tick() {
        let j = jiffy(1000);
        assert_eq!(fires_at(Time::from_us(1500), Time::ZERO, Some(j)), Time::from_ms(2));
    }
}
