//! Windowed running maximum in constant space: Kathleen Nichols' algorithm as Linux implements it
//! in `lib/win_minmax.c` (`minmax_running_max`, `minmax_subwin_update`), which BBR uses for its
//! bottleneck-bandwidth filter with time counted in packet-timed rounds.
//!
//! Three samples are kept, best first, with non-decreasing timestamps: the best value in the
//! window and the best of each later part of it. A new best forgets everything older; when the
//! best ages out, the second becomes best. The estimate can exceed the true windowed max only
//! for the window's last quarter/half of a monotonically falling input, a bound Linux accepts.
//! Time and values are `u32` with wrapping arithmetic, as in Linux.

/// One measurement (`struct minmax_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// When it was taken (for BBR: the round count).
    pub t: u32,
    pub v: u32,
}

/// The best, second- and third-best samples (`struct minmax`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    s: [Sample; 3],
}

impl Minmax {
    /// `minmax_get()`: the windowed maximum.
    #[inline]
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset()`: forget everything; `meas` at `t` is the only sample.
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        self.s = [Sample { t, v: meas }; 3];
        meas
    }

    /// `minmax_running_max()`: add `meas` taken at `t` to a max filter over `win` time units.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = Sample { t, v: meas };
        // A new max, or even the third choice has left the window: start over.
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update()`: age the choices as time advances.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best left the window: promote the others. The second may be out too (the
            // third was checked on entry), so this can happen twice.
            self.s = [self.s[1], self.s[2], val];
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a second choice: take one from the second quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a third choice: take one from the second half.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_max_new_best_replaces_all_choices() {
        let mut m = Minmax::default();
        m.reset(0, 5);
        assert_eq!(m.running_max(10, 1, 3), 5);
        assert_eq!(m.running_max(10, 2, 9), 9);
        assert_eq!(m.s, [Sample { t: 2, v: 9 }; 3]);
    }

    #[test]
    fn running_max_forgets_best_after_window_and_promotes_second() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        // t = 3 > win/4: 60 becomes second and third choice.
        assert_eq!(m.running_max(10, 3, 60), 100);
        assert_eq!(m.s[1], Sample { t: 3, v: 60 });
        // t = 6 > win/2 and third == second: 40 becomes the third choice.
        assert_eq!(m.running_max(10, 6, 40), 100);
        assert_eq!(m.s[2], Sample { t: 6, v: 40 });
        // Still inside the window at t = 10 (dt = 10 is not > 10).
        assert_eq!(m.running_max(10, 10, 20), 100);
        // t = 11: the best aged out; the second (60 @ 3) is now the max.
        assert_eq!(m.running_max(10, 11, 20), 60);
        assert_eq!(m.s, [Sample { t: 3, v: 60 }, Sample { t: 6, v: 40 }, Sample { t: 11, v: 20 }]);
    }

    #[test]
    fn running_max_resets_when_every_choice_is_stale() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        // Nothing for 11 units, then a lower sample: the third choice (t = 0) is out, reset.
        assert_eq!(m.running_max(10, 11, 7), 7);
        assert_eq!(m.s, [Sample { t: 11, v: 7 }; 3]);
    }

    #[test]
    fn running_max_handles_time_wrap() {
        let mut m = Minmax::default();
        m.reset(u32::MAX - 1, 50);
        assert_eq!(m.running_max(10, 3, 10), 50); // 5 units later across the wrap
        assert_eq!(m.running_max(10, 9, 10), 10); // 11 units later: forgotten
    }
}
