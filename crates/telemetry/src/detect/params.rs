//! What the hysteresis detector is told, and `burstlab detect`'s defaults (int-telemetry.md §14.1,
//! §16.2).
//!
//! The vendors' microburst monitors — Cisco Nexus 9000 `burst-detect rise-threshold /
//! fall-threshold` (bytes, or % of the buffer from NX-OS 10.5), Arista LANZ upper/lower queue
//! thresholds, Juniper QFX `depth-threshold high/low` (bytes) — all take a rise and a fall in
//! bytes of one queue; none has a default that fits every port, and none guesses the buffer. So:
//!
//! - **rise**: as given; else [`DEFAULT_RISE_OF_BUFFER`] of `--buffer`; else, when the buffer is
//!   unknown, [`DEFAULT_RISE_OF_DEEPEST`] of the deepest occupancy seen on each queue (the buffer
//!   is at least that deep, and exactly that when the queue dropped), never below
//!   [`RISE_FLOOR_BYTES`];
//! - **fall**: as given; else [`DEFAULT_FALL_OF_RISE`] of the queue's rise;
//! - **min duration**: as given; else 0, every burst the input resolves (each burst says its
//!   `resolution_s`);
//! - **merge gap**: as given; else [`DEFAULT_MERGE_GAP_NS`].

use super::{Definition, ParamError};

/// Default rise with a known buffer: a quarter of it (NX-OS 10.5 accepts rise in % of the
/// queue's buffer; 25–50 % is where operators put it, int-telemetry.md §14.1).
pub const DEFAULT_RISE_OF_BUFFER: f64 = 0.25;

/// Default rise with an unknown buffer: half the deepest occupancy seen on the queue. A relative
/// rise keeps a port's routine queueing (TSO trains of a few flows, tens of kB) out of the
/// bursts that fill it; half a filled buffer is the middle of the 25–50 % operators use.
pub const DEFAULT_RISE_OF_DEEPEST: f64 = 0.5;

/// The least rise a queue gets from its deepest occupancy: 20 packets of 1500 bytes, the
/// queue at which DCTCP starts marking on a 1 Gbit/s port (Alizadeh et al., SIGCOMM 2010,
/// K = 20 packets at 1 Gbit/s; linux-tcp.md §9.3). Less is a busy FIFO, not a burst.
pub const RISE_FLOOR_BYTES: u64 = 20 * 1_500;

/// Default fall as a fraction of the rise: the hysteresis band keeps a queue hovering at the
/// rise from opening a burst per packet (LANZ and Nexus both close on a lower threshold).
pub const DEFAULT_FALL_OF_RISE: f64 = 0.5;

/// Default merge gap: a re-rise within 1 ms of the fall continues the burst, so a queue that
/// dips below fall between a burst's packet trains reads as one burst, as a 1 ms throughput
/// monitor (Allegro's interval, int-telemetry.md §14.1) sees it. The vendors' queue monitors
/// have no merge gap: `--merge-gap 0s` is their definition exactly.
pub const DEFAULT_MERGE_GAP_NS: u64 = 1_000_000;

/// The rise threshold: fixed, or from each queue's deepest occupancy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rise {
    Bytes(u64),
    /// `fraction` × the deepest occupancy seen on the queue, at least `floor_bytes`.
    OfDeepest {
        fraction: f64,
        floor_bytes: u64,
    },
}

/// The fall threshold: fixed (read as the rise when above it), or a fraction of the rise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fall {
    Bytes(u64),
    OfRise(f64),
}

/// One queue's thresholds in bytes, `fall_bytes ≤ rise_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub rise_bytes: u64,
    pub fall_bytes: u64,
}

/// The detector's parameters; times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HysteresisParams {
    pub rise: Rise,
    pub fall: Fall,
    pub min_duration_ns: u64,
    pub merge_gap_ns: u64,
    /// The queue's buffer when the user stated it: an occupancy above it cannot be real (a
    /// corrupt field) and is counted suspect instead of feeding a burst.
    pub buffer_bytes: Option<u64>,
}

impl HysteresisParams {
    /// Fixed thresholds in bytes. A `fall_bytes` above `rise_bytes` is read as `rise_bytes` (a
    /// burst then ends as soon as it drops below rise).
    pub fn fixed(
        rise_bytes: u64,
        fall_bytes: u64,
        min_duration_ns: u64,
        merge_gap_ns: u64,
    ) -> Self {
        HysteresisParams {
            rise: Rise::Bytes(rise_bytes),
            fall: Fall::Bytes(fall_bytes),
            min_duration_ns,
            merge_gap_ns,
            buffer_bytes: None,
        }
    }

    /// `burstlab detect`'s parameters for the options given (`None`: not given), with the
    /// defaults of this module. `rise` and `fall` are bytes (a percentage already applied to
    /// the buffer by the caller).
    pub fn from_options(
        rise: Option<u64>,
        fall: Option<u64>,
        buffer_bytes: Option<u64>,
        min_duration_ns: Option<u64>,
        merge_gap_ns: Option<u64>,
    ) -> Self {
        let rise = match (rise, buffer_bytes) {
            (Some(r), _) => Rise::Bytes(r),
            (None, Some(b)) => Rise::Bytes((b as f64 * DEFAULT_RISE_OF_BUFFER).round() as u64),
            (None, None) => {
                Rise::OfDeepest { fraction: DEFAULT_RISE_OF_DEEPEST, floor_bytes: RISE_FLOOR_BYTES }
            }
        };
        HysteresisParams {
            rise,
            fall: fall.map_or(Fall::OfRise(DEFAULT_FALL_OF_RISE), Fall::Bytes),
            min_duration_ns: min_duration_ns.unwrap_or(0),
            merge_gap_ns: merge_gap_ns.unwrap_or(DEFAULT_MERGE_GAP_NS),
            buffer_bytes,
        }
    }

    /// Thresholds as percentages of a buffer of `buffer_bytes` (Cisco NX-OS 10.5x accepts
    /// rise/fall in %; int-telemetry.md §14.1), rounded to the nearest byte.
    pub fn from_buffer_percent(
        buffer_bytes: u64,
        rise_pct: f64,
        fall_pct: f64,
        min_duration_ns: u64,
        merge_gap_ns: u64,
    ) -> Result<Self, ParamError> {
        let pct = |field, v: f64| {
            if v.is_finite() && (0.0..=100.0).contains(&v) {
                Ok(v)
            } else {
                Err(ParamError { field, value: v, expected: "a percentage in 0..=100" })
            }
        };
        let rise = pct("rise_pct", rise_pct)?;
        let fall = pct("fall_pct", fall_pct)?;
        if fall > rise {
            return Err(ParamError { field: "fall_pct", value: fall, expected: "≤ rise_pct" });
        }
        let bytes = |p: f64| (buffer_bytes as f64 * p / 100.0).round() as u64;
        Ok(HysteresisParams {
            buffer_bytes: Some(buffer_bytes),
            ..HysteresisParams::fixed(bytes(rise), bytes(fall), min_duration_ns, merge_gap_ns)
        })
    }

    /// Whether the thresholds wait for each queue's deepest occupancy.
    pub fn relative(&self) -> bool {
        matches!(self.rise, Rise::OfDeepest { .. })
    }

    /// A queue's thresholds given the deepest occupancy seen on it.
    pub fn thresholds(&self, deepest_bytes: u64) -> Thresholds {
        let rise_bytes = match self.rise {
            Rise::Bytes(r) => r,
            Rise::OfDeepest { fraction, floor_bytes } => {
                ((deepest_bytes as f64 * fraction).round() as u64).max(floor_bytes)
            }
        };
        let fall_bytes = match self.fall {
            Fall::Bytes(f) => f,
            Fall::OfRise(x) => (rise_bytes as f64 * x).round() as u64,
        };
        Thresholds { rise_bytes, fall_bytes: fall_bytes.min(rise_bytes) }
    }

    /// The least rise and the least fall any queue can get: below them a sample can neither open
    /// a burst nor keep one open, whatever the queue's deepest occupancy turns out to be.
    pub fn lowest(&self) -> Thresholds {
        self.thresholds(0)
    }

    /// The definition a queue's bursts report.
    pub fn definition(&self, t: Thresholds) -> Definition {
        Definition::Hysteresis {
            rise_bytes: t.rise_bytes,
            fall_bytes: t.fall_bytes,
            min_duration_s: self.min_duration_ns as f64 / 1e9,
            merge_gap_s: self.merge_gap_ns as f64 / 1e9,
            rise_of_deepest: match self.rise {
                Rise::OfDeepest { fraction, .. } => Some(fraction),
                Rise::Bytes(_) => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_of_buffer_thresholds() {
        let p = HysteresisParams::from_buffer_percent(1_000_000, 50.0, 25.0, 10, 20).unwrap();
        assert_eq!(
            p,
            HysteresisParams {
                buffer_bytes: Some(1_000_000),
                ..HysteresisParams::fixed(500_000, 250_000, 10, 20)
            }
        );
        let p = HysteresisParams::from_buffer_percent(333, 33.3, 0.0, 0, 0).unwrap();
        assert_eq!(p.thresholds(0), Thresholds { rise_bytes: 111, fall_bytes: 0 });
        let e = HysteresisParams::from_buffer_percent(1, 120.0, 10.0, 0, 0).unwrap_err();
        assert_eq!(e.field, "rise_pct");
        let e = HysteresisParams::from_buffer_percent(1, 10.0, f64::NAN, 0, 0).unwrap_err();
        assert_eq!(e.field, "fall_pct");
        let e = HysteresisParams::from_buffer_percent(1, 10.0, 20.0, 0, 0).unwrap_err();
        assert_eq!(e.expected, "≤ rise_pct");
    }

    #[test]
    fn defaults_with_a_buffer_are_a_quarter_of_it_and_half_of_that() {
        let p = HysteresisParams::from_options(None, None, Some(2_000_000), None, None);
        assert!(!p.relative());
        // The deepest occupancy does not matter once the buffer is known.
        for deepest in [0, 90_000, 2_000_000] {
            assert_eq!(
                p.thresholds(deepest),
                Thresholds { rise_bytes: 500_000, fall_bytes: 250_000 }
            );
        }
        assert_eq!((p.min_duration_ns, p.merge_gap_ns), (0, DEFAULT_MERGE_GAP_NS));
    }

    #[test]
    fn defaults_without_a_buffer_follow_each_queues_deepest_occupancy() {
        let p = HysteresisParams::from_options(None, None, None, None, None);
        assert!(p.relative());
        // A queue that filled 2 MB: bursts are what reaches 1 MB.
        assert_eq!(
            p.thresholds(2_000_000),
            Thresholds { rise_bytes: 1_000_000, fall_bytes: 500_000 }
        );
        // A queue that never held more than a few packets: the floor.
        assert_eq!(p.thresholds(9_000), Thresholds { rise_bytes: 30_000, fall_bytes: 15_000 });
        assert_eq!(p.lowest(), Thresholds { rise_bytes: 30_000, fall_bytes: 15_000 });
    }

    #[test]
    fn given_options_win_over_defaults() {
        let p =
            HysteresisParams::from_options(Some(80_000), None, Some(2_000_000), Some(5), Some(7));
        assert_eq!(p.thresholds(0), Thresholds { rise_bytes: 80_000, fall_bytes: 40_000 });
        assert_eq!((p.min_duration_ns, p.merge_gap_ns), (5, 7));
        // A fixed fall under a relative rise, capped at the rise on a shallow queue.
        let p = HysteresisParams::from_options(None, Some(40_000), None, None, None);
        assert_eq!(p.thresholds(2_000_000).fall_bytes, 40_000);
        assert_eq!(p.thresholds(0), Thresholds { rise_bytes: 30_000, fall_bytes: 30_000 });
    }

    #[test]
    fn definition_says_whether_rise_came_from_the_deepest_occupancy() {
        let p = HysteresisParams::from_options(None, None, None, None, None);
        let d = serde_json::to_value(p.definition(p.thresholds(2_000_000))).unwrap();
        assert_eq!(d["rise_bytes"], 1_000_000);
        assert_eq!(d["rise_of_deepest"], 0.5);
        let p = HysteresisParams::fixed(10, 5, 0, 0);
        let d = serde_json::to_value(p.definition(p.thresholds(0))).unwrap();
        assert!(d["rise_of_deepest"].is_null());
    }
}
