//! How long a host takes to do something (wake its application, answer a handshake, run a
//! timer): fixed, or drawn from a distribution with the component's own random stream.

use crate::time::Time;

/// How long a host takes to do something (wake its application, answer a handshake): the same
/// every time, or drawn afresh each time from the run's seed.
#[derive(Clone, Debug, PartialEq)]
pub enum Latency {
    Fixed(Time),
    /// Exponential with this mean: a host that shares its CPU comes back mostly quickly and
    /// now and then late.
    Exponential(Time),
    /// One of these, each equally likely: a measured distribution (samples, or quantiles at
    /// equal steps of probability). Never empty.
    Samples(Vec<Time>),
}

impl Latency {
    pub const ZERO: Latency = Latency::Fixed(Time::ZERO);

    /// One draw: the fixed time, or a fresh one from `rng`.
    pub fn draw(&self, rng: &mut crate::rng::Stream) -> Time {
        match self {
            Latency::Fixed(t) => *t,
            Latency::Exponential(mean) => {
                Time((mean.ps() as f64 * rng.exponential()).round() as u64)
            }
            Latency::Samples(v) => v[rng.below(v.len() as u64) as usize],
        }
    }

    /// The longest a draw takes (an exponential's 20 means: longer once in 5·10⁸ draws).
    pub fn upper(&self) -> Time {
        match self {
            Latency::Fixed(t) => *t,
            Latency::Exponential(mean) => *mean * 20,
            Latency::Samples(v) => v.iter().copied().max().unwrap_or(Time::ZERO),
        }
    }

    /// No latency at all: the host acts at once.
    pub fn is_zero(&self) -> bool {
        match self {
            Latency::Fixed(t) | Latency::Exponential(t) => *t == Time::ZERO,
            Latency::Samples(v) => v.iter().all(|t| *t == Time::ZERO),
        }
    }
}
