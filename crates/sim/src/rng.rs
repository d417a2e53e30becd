//! Deterministic random streams: one per component, derived from the scenario seed, so adding
//! a component never shifts another's numbers (reference/conventions.md §8.3: never `StdRng`).
//!
//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014): a 64-bit counter stepped by the golden-ratio increment and passed through a
//! finalizing mix. Small, fast, and fixed forever, so golden outputs never change with a
//! dependency update.

/// The golden-ratio increment, `0x9e3779b97f4a7c15` (SplitMix64).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Clone, Debug)]
pub struct Stream {
    state: u64,
}

/// The stream of component `id` of kind `domain` (e.g. burst source 3) for a run seeded `seed`.
pub fn stream(seed: u64, domain: &str, id: u64) -> Stream {
    let mut h = mix(seed ^ GOLDEN_GAMMA);
    for b in domain.bytes() {
        h = mix(h ^ b as u64);
    }
    Stream { state: mix(h ^ id.wrapping_mul(GOLDEN_GAMMA)) }
}

/// A well-mixed 64-bit hash of `x` under `salt` (two finalizer rounds): ECMP's per-switch
/// hash of a flow key.
pub fn hash(salt: u64, x: u64) -> u64 {
    mix(salt ^ mix(x ^ GOLDEN_GAMMA))
}

/// The SplitMix64 finalizer (variant 13 of Stafford's mixers).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Stream {
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix(self.state)
    }

    /// Exponential with mean 1 (inversion: −ln U, U uniform in (0, 1] from 53 random bits).
    pub fn exponential(&mut self) -> f64 {
        let u = ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        -u.ln()
    }

    /// Uniform in `[0, n)` (Lemire's multiply-shift; bias below 2^-32 for the spans we draw).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Put `v` in a uniformly random order (Fisher–Yates, from the back).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (the reference implementation's sequence).
        let mut s = Stream { state: 0 };
        assert_eq!(s.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(s.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn exponential_draws_have_mean_one_and_the_exponential_quantiles() {
        let mut s = stream(7, "read-latency", 0);
        let mut x: Vec<f64> = (0..100_000).map(|_| s.exponential()).collect();
        assert!(x.iter().all(|v| v.is_finite() && *v >= 0.0));
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        x.sort_by(f64::total_cmp);
        // Median ln 2 = 0.693, p90 ln 10 = 2.303.
        assert!((x[50_000] - std::f64::consts::LN_2).abs() < 0.01, "median {}", x[50_000]);
        assert!((x[90_000] - std::f64::consts::LN_10).abs() < 0.03, "p90 {}", x[90_000]);
    }

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4).map(|_| stream(1, "burst", 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(stream(1, "burst", 0).next_u64(), stream(1, "burst", 1).next_u64());
        assert_ne!(stream(1, "burst", 0).next_u64(), stream(2, "burst", 0).next_u64());
        assert_ne!(stream(1, "burst", 0).next_u64(), stream(1, "flow", 0).next_u64());
    }

    #[test]
    fn shuffle_permutes_and_puts_every_element_first_equally_often() {
        let mut s = stream(7, "serve-order", 0);
        let mut first = [0u32; 4];
        for _ in 0..8_000 {
            let mut v = [0u32, 1, 2, 3];
            s.shuffle(&mut v);
            let mut sorted = v;
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3], "a permutation");
            first[v[0] as usize] += 1;
        }
        // 2,000 expected each; a standard deviation is 39.
        assert!(first.iter().all(|n| (1_850..2_150).contains(n)), "{first:?}");
        let again = |seed| {
            let mut v: Vec<u32> = (0..32).collect();
            stream(seed, "serve-order", 0).shuffle(&mut v);
            v
        };
        assert_eq!(again(3), again(3));
        assert_ne!(again(3), again(4));
    }

    #[test]
    fn below_stays_in_range_and_spreads() {
        let mut s = stream(7, "t", 0);
        let v: Vec<u64> = (0..10_000).map(|_| s.below(10)).collect();
        assert!(v.iter().all(|x| *x < 10));
        for d in 0..10 {
            let n = v.iter().filter(|x| **x == d).count();
            assert!((900..1100).contains(&n), "digit {d}: {n}");
        }
    }
}
