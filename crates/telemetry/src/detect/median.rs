//! A fixed-size log histogram for the two medians the detector needs per queue — the sample
//! spacing (the finest timescale a detection can resolve, int-telemetry.md §16.2) and the hop
//! latency outside bursts (the victims' baseline, §16.3) — in O(1) time and memory per sample.
//!
//! Values below 8 get a bucket each; above, each power of two is split into 8 buckets, so a
//! bucket spans at most 12.5 % of its value. Each bucket keeps the sum of its values, and the
//! median is the mean of the bucket holding the middle rank: exact when that bucket holds one
//! distinct value (regular sampling, a constant baseline), otherwise within the bucket's width.

/// Sub-buckets per power of two, as a shift: 2^3 = 8.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Exact buckets for 0..8, then 8 per exponent 3..=63.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

#[derive(Clone, Debug)]
pub(crate) struct LogHistogram {
    count: Box<[u64]>,
    sum: Box<[u128]>,
    n: u64,
}

impl LogHistogram {
    pub(crate) fn new() -> Self {
        LogHistogram {
            count: vec![0; BUCKETS].into_boxed_slice(),
            sum: vec![0; BUCKETS].into_boxed_slice(),
            n: 0,
        }
    }

    fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // ≥ SUB_BITS
        let mantissa = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
        SUB + (e - SUB_BITS) as usize * SUB + mantissa
    }

    pub(crate) fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        // `b < BUCKETS` by construction; `get_mut` keeps the no-panic promise visible.
        if let (Some(c), Some(s)) = (self.count.get_mut(b), self.sum.get_mut(b)) {
            *c += 1;
            *s += u128::from(v);
            self.n += 1;
        }
    }

    /// The lower median (rank ⌊(n − 1) / 2⌋), as the mean of its bucket; `None` when empty.
    pub(crate) fn median(&self) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = (self.n - 1) / 2;
        let mut below = 0u64;
        for (c, s) in self.count.iter().zip(self.sum.iter()) {
            if *c > 0 && below + c > rank {
                return u64::try_from(s / u128::from(*c)).ok();
            }
            below += c;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_empty_is_none() {
        assert_eq!(LogHistogram::new().median(), None);
    }

    #[test]
    fn median_constant_spacing_is_exact() {
        let mut h = LogHistogram::new();
        for _ in 0..1001 {
            h.record(1_000);
        }
        assert_eq!(h.median(), Some(1_000));
    }

    #[test]
    fn median_picks_the_middle_rank_not_the_mean() {
        let mut h = LogHistogram::new();
        for v in [5, 6, 7, 1_000_000, 2_000_000] {
            h.record(v);
        }
        assert_eq!(h.median(), Some(7));
        let mut h = LogHistogram::new();
        for v in [100, 100, 100, 9_000_000] {
            h.record(v);
        }
        assert_eq!(h.median(), Some(100));
    }

    #[test]
    fn median_within_one_bucket_of_the_true_value() {
        let mut h = LogHistogram::new();
        let values: Vec<u64> = (0..999).map(|i| 10_000 + 37 * i).collect();
        for &v in &values {
            h.record(v);
        }
        let truth = values[499] as f64;
        let got = h.median().unwrap() as f64;
        assert!((got - truth).abs() / truth <= 0.125, "median {got} vs {truth}");
    }

    #[test]
    fn bucket_extremes_stay_in_range() {
        assert_eq!(LogHistogram::bucket(0), 0);
        assert_eq!(LogHistogram::bucket(7), 7);
        assert_eq!(LogHistogram::bucket(8), 8);
        assert_eq!(LogHistogram::bucket(u64::MAX), BUCKETS - 1);
        let mut h = LogHistogram::new();
        h.record(u64::MAX);
        assert_eq!(h.median(), Some(u64::MAX));
    }
}
