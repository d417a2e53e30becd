//! The time-weighted mean of a level that changes at instants, such as a queue's bytes: each
//! level counts for as long as it held, not once per change (a queue that sits full for a
//! second and empties in a microsecond averages near full, not half).

use crate::time::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct TimeWeighted {
    level: u64,
    since: Time,
    /// ∑ level × duration, in level·picoseconds: a 64 MiB queue held for an hour is about
    /// 2⁷⁸, so 128 bits.
    area: u128,
}

impl TimeWeighted {
    /// The level is `level` from `now` on (`now` never goes back).
    #[inline]
    pub fn set(&mut self, now: Time, level: u64) {
        self.area += u128::from(self.level) * u128::from((now - self.since).ps());
        self.since = now;
        self.level = level;
    }

    /// The mean over `[0, end]`, with the level holding from its last change until `end`;
    /// 0 for an empty span.
    pub fn mean(&self, end: Time) -> f64 {
        if end.ps() == 0 {
            return 0.0;
        }
        let held = u128::from(self.level) * u128::from(end.ps().saturating_sub(self.since.ps()));
        (self.area + held) as f64 / end.ps() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_weighs_by_how_long_it_held() {
        // 0 B for 1 ms, 1000 B for 3 ms, 0 B for the last 4 ms: mean 375 B over 8 ms.
        let mut m = TimeWeighted::default();
        m.set(Time::from_ms(1), 1000);
        m.set(Time::from_ms(4), 0);
        assert_eq!(m.mean(Time::from_ms(8)), 375.0);
    }

    #[test]
    fn the_last_level_holds_until_the_end() {
        let mut m = TimeWeighted::default();
        m.set(Time::from_ms(2), 600);
        assert_eq!(m.mean(Time::from_ms(4)), 300.0);
        assert_eq!(TimeWeighted::default().mean(Time::ZERO), 0.0);
    }
}
