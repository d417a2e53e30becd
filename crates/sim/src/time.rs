//! Simulated time: integer picoseconds.
//!
//! One byte at 100 Gbit/s lasts 80 ps, so picoseconds keep serialization exact at every rate we
//! model; a `u64` of picoseconds spans about 213 days (htsim's `simtime_picosec` does the same).
//! `Time` serves both as an instant and as a span, as in htsim.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Picoseconds since the start of the run (or a span of picoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const PS_PER_NS: u64 = 1_000;
    pub const PS_PER_US: u64 = 1_000_000;
    pub const PS_PER_MS: u64 = 1_000_000_000;
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    #[inline]
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    #[inline]
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * Self::PS_PER_NS)
    }
    #[inline]
    pub const fn from_us(us: u64) -> Time {
        Time(us * Self::PS_PER_US)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * Self::PS_PER_MS)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Time {
        Time(s * Self::PS_PER_S)
    }
    /// Rounds to the nearest picosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Time {
        if s.is_nan() || s <= 0.0 {
            Time::ZERO
        } else {
            Time((s * Self::PS_PER_S as f64).round() as u64)
        }
    }
    #[inline]
    pub const fn ps(self) -> u64 {
        self.0
    }
    #[inline]
    pub const fn as_us(self) -> u64 {
        self.0 / Self::PS_PER_US
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }
    #[inline]
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

impl std::ops::Mul<u64> for Time {
    type Output = Time;
    /// Saturates rather than wrapping: a backed-off timer never overflows into the past.
    #[inline]
    fn mul(self, k: u64) -> Time {
        Time(self.0.saturating_mul(k))
    }
}

impl std::ops::Div<u64> for Time {
    type Output = Time;
    #[inline]
    fn div(self, k: u64) -> Time {
        Time(self.0 / k)
    }
}

impl Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for Time {
    #[inline]
    fn add_assign(&mut self, rhs: Time) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for Time {
    type Output = Time;
    /// Panics in debug builds if `rhs > self`: time spans are never negative.
    #[inline]
    fn sub(self, rhs: Time) -> Time {
        debug_assert!(rhs.0 <= self.0, "negative time span: {self} - {rhs}");
        Time(self.0.wrapping_sub(rhs.0))
    }
}
impl SubAssign for Time {
    #[inline]
    fn sub_assign(&mut self, rhs: Time) {
        *self = *self - rhs;
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= Self::PS_PER_S {
            write!(f, "{:.6}s", self.as_secs_f64())
        } else if ps >= Self::PS_PER_MS {
            write!(f, "{:.3}ms", ps as f64 / Self::PS_PER_MS as f64)
        } else if ps >= Self::PS_PER_US {
            write!(f, "{:.3}us", ps as f64 / Self::PS_PER_US as f64)
        } else {
            write!(f, "{}ns", ps as f64 / Self::PS_PER_NS as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_exact() {
        assert_eq!(Time::from_secs(1).ps(), 1_000_000_000_000);
        assert_eq!(Time::from_ms(209).ps(), 209_000_000_000);
        assert_eq!(Time::from_secs_f64(1.5), Time::from_ms(1500));
        assert_eq!(Time::from_secs_f64(-1.0), Time::ZERO);
        assert_eq!(Time::from_us(3).as_us(), 3);
    }

    #[test]
    fn u64_spans_more_than_200_days() {
        assert!(Time::MAX.as_secs_f64() > 200.0 * 86_400.0);
    }

    #[test]
    fn display_picks_a_readable_unit() {
        assert_eq!(Time::from_ms(5).to_string(), "5.000ms");
        assert_eq!(Time::from_secs(2).to_string(), "2.000000s");
    }
}
