//! The web-search workload: flow sizes from the DCTCP paper's production cluster, arriving as a
//! Poisson process at a given load. A self-contained generator with its own config type; the
//! world will open a flow for each arrival it yields.
//!
//! Sizes: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Figure 4 (background flow
//! sizes of a 6,000-server web-search cluster), as the piecewise-linear CDF that later work
//! ships: HPCC's `traffic_gen/WebSearch_distribution.txt` (alibaba-edu/High-Precision-
//! Congestion-Control @ 9cf8b9e), the same points pFabric and its successors use. The S-ECN
//! paper's benchmark (seeds/004 §IV-D) draws its background flows from this distribution.
//!
//! Between two points the CDF is linear in bytes, so sampling is inversion with linear
//! interpolation and the mean is the trapezoid sum, as HPCC's `custom_rand.py` computes them;
//! a draw is rounded down to whole bytes, at least 1.
//!
//! Arrivals: exponential gaps of mean `mean_size·8 / (load·rate)`, so the offered bytes per
//! second are `load·rate/8` (HPCC's `traffic_gen.py`, per sending host). Sizes and gaps come
//! from two streams of the run's seed, so a change of load keeps the sizes drawn.

use crate::rng;
use crate::time::Time;
use crate::units::Rate;

/// The web-search flow-size CDF: (flow size in bytes, cumulative percent of flows).
/// HPCC `traffic_gen/WebSearch_distribution.txt` @ 9cf8b9e, after DCTCP (SIGCOMM 2010) Fig. 4.
pub const WEB_SEARCH_CDF: [(u64, f64); 12] = [
    (0, 0.0),
    (10_000, 15.0),
    (20_000, 20.0),
    (30_000, 30.0),
    (50_000, 40.0),
    (80_000, 53.0),
    (200_000, 60.0),
    (1_000_000, 70.0),
    (2_000_000, 80.0),
    (5_000_000, 90.0),
    (10_000_000, 97.0),
    (30_000_000, 100.0),
];

/// A setting the workload cannot run with: the field, its value, what was expected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: expected {expected}")]
pub struct WorkloadError {
    pub field: &'static str,
    pub value: String,
    pub expected: String,
}

/// A flow-size distribution as a piecewise-linear CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// (bytes, cumulative fraction), from (x₀, 0) to (xₙ, 1), both strictly increasing.
    points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// The DCTCP paper's web-search distribution ([`WEB_SEARCH_CDF`]).
    pub fn web_search() -> SizeCdf {
        SizeCdf::from_percent(&WEB_SEARCH_CDF).expect("the shipped CDF is valid")
    }

    /// A CDF from (bytes, cumulative percent) points, as the published files write them: the
    /// first at 0 %, the last at 100 %, sizes and percents strictly increasing.
    pub fn from_percent(points: &[(u64, f64)]) -> Result<SizeCdf, WorkloadError> {
        let err = |value: String, expected: &str| WorkloadError {
            field: "cdf",
            value,
            expected: expected.into(),
        };
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return Err(err("[]".into(), "at least two (bytes, percent) points"));
        };
        if points.len() < 2 || first.1 != 0.0 || last.1 != 100.0 {
            return Err(err(
                format!("{points:?}"),
                "points from 0 % to 100 %, such as [(0, 0.0), (10000, 15.0), …, (30000000, 100.0)]",
            ));
        }
        if let Some(w) = points.windows(2).find(|w| w[1].0 <= w[0].0 || w[1].1 <= w[0].1) {
            return Err(err(
                format!("{:?} then {:?}", w[0], w[1]),
                "sizes and percents strictly increasing",
            ));
        }
        Ok(SizeCdf { points: points.iter().map(|&(x, p)| (x as f64, p / 100.0)).collect() })
    }

    /// Mean flow size in bytes: uniform within each segment (the trapezoid rule).
    pub fn mean(&self) -> f64 {
        self.points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum()
    }

    /// The size below which a fraction `p` of flows fall (`p` in [0, 1]).
    pub fn quantile(&self, p: f64) -> f64 {
        let p = p.clamp(0.0, 1.0);
        let i = self.points.iter().position(|&(_, q)| q >= p).unwrap_or(self.points.len() - 1);
        if i == 0 {
            return self.points[0].0;
        }
        let ((x0, p0), (x1, p1)) = (self.points[i - 1], self.points[i]);
        x0 + (x1 - x0) * (p - p0) / (p1 - p0)
    }

    /// The fraction of all bytes carried by flows larger than `bytes`.
    pub fn byte_share_above(&self, bytes: f64) -> f64 {
        let tail: f64 = self
            .points
            .windows(2)
            .map(|w| {
                let ((x0, p0), (x1, p1)) = (w[0], w[1]);
                let lo = x0.max(bytes);
                if lo >= x1 {
                    return 0.0;
                }
                // The part of the segment above `bytes`, uniform in size.
                let q = (x1 - lo) / (x1 - x0) * (p1 - p0);
                (lo + x1) / 2.0 * q
            })
            .sum();
        tail / self.mean()
    }

    /// One flow size in whole bytes, at least 1.
    pub fn sample(&self, rng: &mut rng::Stream) -> u64 {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (self.quantile(u) as u64).max(1)
    }
}

/// A Poisson flow source at a share of a link's capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowArrivalSpec {
    /// Offered load as a fraction of `rate`: the flows' bytes per second are `load·rate/8`.
    pub load: f64,
    /// The capacity the load is a fraction of (the sending host's link).
    pub rate: Rate,
    /// Arrivals fall in [start, stop).
    pub start: Time,
    pub stop: Time,
    pub sizes: SizeCdf,
}

/// One flow to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowArrival {
    pub at: Time,
    pub size_bytes: u64,
}

/// The arrivals of one source, in time order (an iterator that ends at `stop`).
#[derive(Clone, Debug)]
pub struct Arrivals {
    sizes: SizeCdf,
    /// Mean gap between arrivals, seconds.
    mean_gap_s: f64,
    next: Time,
    stop: Time,
    size_rng: rng::Stream,
    gap_rng: rng::Stream,
}

impl Arrivals {
    /// Source `id` of a run seeded `seed`.
    pub fn new(spec: &FlowArrivalSpec, seed: u64, id: u64) -> Result<Arrivals, WorkloadError> {
        if !(spec.load.is_finite() && spec.load > 0.0) {
            return Err(WorkloadError {
                field: "load",
                value: spec.load.to_string(),
                expected: "a fraction of the link above 0, such as 0.4".into(),
            });
        }
        if spec.rate.bps() == 0 {
            return Err(WorkloadError {
                field: "rate",
                value: "0bps".into(),
                expected: "a rate above 0, such as \"1Gbps\"".into(),
            });
        }
        if spec.stop <= spec.start {
            return Err(WorkloadError {
                field: "stop",
                value: format!("{} s", spec.stop.as_secs_f64()),
                expected: format!("a time after start ({} s)", spec.start.as_secs_f64()),
            });
        }
        let bytes_per_s = spec.load * spec.rate.bps() as f64 / 8.0;
        let mut a = Arrivals {
            sizes: spec.sizes.clone(),
            mean_gap_s: spec.sizes.mean() / bytes_per_s,
            next: spec.start,
            stop: spec.stop,
            size_rng: rng::stream(seed, "websearch-size", id),
            gap_rng: rng::stream(seed, "websearch-gap", id),
        };
        // A Poisson process is memoryless: the first arrival is one gap after `start`.
        a.next = spec.start + a.gap();
        Ok(a)
    }

    /// Mean gap between arrivals, seconds.
    pub fn mean_gap_s(&self) -> f64 {
        self.mean_gap_s
    }

    fn gap(&mut self) -> Time {
        Time::from_secs_f64(self.gap_rng.exponential() * self.mean_gap_s)
    }
}

impl Iterator for Arrivals {
    type Item = FlowArrival;

    fn next(&mut self) -> Option<FlowArrival> {
        if self.next >= self.stop {
            return None;
        }
        let at = self.next;
        self.next = at + self.gap();
        Some(FlowArrival { at, size_bytes: self.sizes.sample(&mut self.size_rng) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(load: f64, secs: u64) -> FlowArrivalSpec {
        FlowArrivalSpec {
            load,
            rate: Rate::from_gbps(1),
            start: Time::ZERO,
            stop: Time::from_secs(secs),
            sizes: SizeCdf::web_search(),
        }
    }

    // ---- The distribution ----

    #[test]
    fn web_search_mean_and_percentiles_are_the_published_cdfs() {
        let cdf = SizeCdf::web_search();
        // Σ (x₀ + x₁)/2 · Δp over the 11 segments: 1,711,250 B (HPCC's getAvg()).
        assert!((cdf.mean() - 1_711_250.0).abs() < 1e-6, "mean {}", cdf.mean());
        for (p, bytes) in [
            (0.15, 10_000.0),
            (0.5, 50_000.0 + 30_000.0 * 10.0 / 13.0),
            (0.6, 200_000.0),
            (0.9, 5_000_000.0),
            (0.99, 10_000_000.0 + 20_000_000.0 * 2.0 / 3.0),
            (1.0, 30_000_000.0),
        ] {
            let q = cdf.quantile(p);
            assert!((q / bytes - 1.0).abs() < 1e-9, "p{}: {q} B, expected {bytes} B", p * 100.0);
        }
        // DCTCP §2.2: most flows are small, most bytes are in the large ones — here 95.0 % of
        // the bytes are in the 30 % of flows above 1 MB.
        let share = cdf.byte_share_above(1e6);
        assert!((share - 1_625_000.0 / 1_711_250.0).abs() < 1e-12, "share {share}");
    }

    #[test]
    fn samples_follow_the_cdf() {
        let cdf = SizeCdf::web_search();
        let mut rng = rng::stream(3, "websearch-size", 0);
        let n = 200_000;
        let mut v: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        assert!(v.iter().all(|&x| (1..=30_000_000).contains(&x)));
        // The sizes' standard deviation is ~3.5 MB: the mean's is ~8 KB here, 0.5 %.
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / cdf.mean() - 1.0).abs() < 0.02, "sampled mean {mean}");
        v.sort_unstable();
        // Tolerances ≈ 4σ of each order statistic: √(p(1 − p)/n) over the CDF's density there.
        for (p, tol) in [(0.15, 0.06), (0.5, 0.02), (0.9, 0.04), (0.99, 0.03)] {
            let got = v[(p * n as f64) as usize] as f64;
            let want = cdf.quantile(p);
            assert!((got / want - 1.0).abs() < tol, "p{}: {got} B against {want} B", p * 100.0);
        }
        let small = v.iter().filter(|&&x| x <= 100_000).count() as f64 / n as f64;
        // P(size ≤ 100 KB) = 53 % + 7 % · 20/120.
        assert!((small - (0.53 + 0.07 / 6.0)).abs() < 0.005, "≤ 100 KB: {small}");
    }

    #[test]
    fn a_cdf_that_does_not_run_from_0_to_100_or_rise_is_refused() {
        let e = SizeCdf::from_percent(&[(0, 0.0), (10, 90.0)]).unwrap_err();
        assert_eq!(e.field, "cdf");
        assert!(e.to_string().contains("expected points from 0 % to 100 %"), "{e}");
        let e = SizeCdf::from_percent(&[(0, 0.0), (10, 50.0), (10, 100.0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cdf = (10, 50.0) then (10, 100.0): expected sizes and percents strictly increasing"
        );
        assert!(SizeCdf::from_percent(&[]).is_err());
    }

    // ---- Arrivals ----

    #[test]
    fn arrivals_offer_the_load_as_a_poisson_process() {
        let (load, secs) = (0.4, 60);
        let a = Arrivals::new(&spec(load, secs), 7, 0).unwrap();
        // 0.4 Gbit/s = 50 MB/s over a 1.711 MB mean: one flow every 34.2 ms.
        let mean_gap = a.mean_gap_s();
        assert!((mean_gap - 1_711_250.0 / 50e6).abs() < 1e-12);
        let flows: Vec<FlowArrival> = a.collect();
        assert!(flows.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(flows.iter().all(|f| f.at < Time::from_secs(secs)));
        // ~1,753 arrivals: a Poisson count's deviation is ~42, so 10 % is > 4σ.
        let expected = secs as f64 / mean_gap;
        let n = flows.len() as f64;
        assert!((n / expected - 1.0).abs() < 0.1, "{n} arrivals, expected {expected}");
        // Exponential gaps: coefficient of variation 1.
        let gaps: Vec<f64> = flows.windows(2).map(|w| (w[1].at - w[0].at).as_secs_f64()).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / m - 1.0).abs() < 0.1, "gap CV {}", sd / m);
    }

    #[test]
    fn offered_bytes_match_the_load_over_a_long_run() {
        // ~26,000 flows of heavy-tailed sizes: the total's deviation is ~1.6 %.
        let (load, secs) = (0.6, 600);
        let flows: Vec<_> = Arrivals::new(&spec(load, secs), 11, 2).unwrap().collect();
        let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
        let offered = bytes as f64 * 8.0 / secs as f64 / 1e9;
        assert!((offered / load - 1.0).abs() < 0.05, "offered {offered} of 1 Gbit/s");
    }

    #[test]
    fn arrivals_are_seeded_per_source_and_sizes_keep_across_loads() {
        let take = |load, seed, id| -> Vec<FlowArrival> {
            Arrivals::new(&spec(load, 5), seed, id).unwrap().take(50).collect()
        };
        assert_eq!(take(0.3, 1, 0), take(0.3, 1, 0));
        assert_ne!(take(0.3, 1, 0), take(0.3, 2, 0));
        assert_ne!(take(0.3, 1, 0), take(0.3, 1, 1));
        let sizes = |v: Vec<FlowArrival>| v.into_iter().map(|f| f.size_bytes).collect::<Vec<_>>();
        assert_eq!(sizes(take(0.3, 1, 0)), sizes(take(0.6, 1, 0)));
    }

    #[test]
    fn bad_settings_name_the_field() {
        let e = Arrivals::new(&spec(0.0, 5), 1, 0).unwrap_err();
        assert_eq!(e.to_string(), "load = 0: expected a fraction of the link above 0, such as 0.4");
        let e =
            Arrivals::new(&FlowArrivalSpec { rate: Rate(0), ..spec(0.5, 5) }, 1, 0).unwrap_err();
        assert_eq!(e.field, "rate");
        let e = Arrivals::new(&spec(0.5, 0), 1, 0).unwrap_err();
        assert_eq!(e.to_string(), "stop = 0 s: expected a time after start (0 s)");
    }
}
