//! Human units in scenario files: rates (`"10Gbps"`), sizes (`"13GiB"`, `"500MB"`) and times
//! (`"8ms"`, `"1.5s"`), parsed exactly into engine units.
//!
//! Decimals are read as integers (mantissa and decimal exponent), never through `f64`, so
//! `"0.1ms"` is exactly 100 000 000 ps and `"2.5Gbps"` exactly 2 500 000 000 bit/s. A result
//! below one engine unit is rounded to the nearest unit (half up). The `format_*` functions
//! print a value that parses back to the same value.

use std::fmt;

use crate::time::Time;
use crate::units::Rate;

/// Why a unit string was refused; the caller turns it into a field error with an example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitError {
    /// Not `<decimal><unit>` with a known unit.
    Syntax,
    /// A leading minus sign: no quantity in a scenario is negative.
    Negative,
    /// The value does not fit in the engine's `u64`.
    TooLarge,
}

/// Rate units, 1000-based (IEC 80000-13 uses SI prefixes for bit rates).
const RATE_UNITS: &[(&str, u64)] = &[
    ("bps", 1),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];
/// The all-lowercase spelling is common in tools (`tc`, iperf3 docs); a mixed case such as
/// `"MBps"` is refused because it usually means megabytes.
const RATE_ALIASES: &[(&str, &str)] =
    &[("kbps", "Kbps"), ("mbps", "Mbps"), ("gbps", "Gbps"), ("tbps", "Tbps")];

/// Size units: SI (1000) and IEC binary (1024) prefixes. Case matters: `"Gb"` would be bits.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];
/// `kB` is the SI spelling of the kilo prefix.
const SIZE_ALIASES: &[(&str, &str)] = &[("kB", "KB")];

/// Time units in picoseconds.
const TIME_UNITS: &[(&str, u64)] = &[
    ("ns", Time::PS_PER_NS),
    ("us", Time::PS_PER_US),
    ("ms", Time::PS_PER_MS),
    ("s", Time::PS_PER_S),
];
/// Both the micro sign (U+00B5) and Greek mu (U+03BC) are typed for microseconds.
const TIME_ALIASES: &[(&str, &str)] = &[("\u{b5}s", "us"), ("\u{3bc}s", "us")];

/// Fractional digits kept; further digits are below one engine unit for every unit above.
const MAX_FRACTION_DIGITS: u32 = 18;

/// Parses a rate such as `"10Gbps"` or `"2.5gbps"`.
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    parse_with(s, RATE_UNITS, RATE_ALIASES).map(Rate)
}

/// Parses a size such as `"13GiB"`, `"500MB"` or `"9000"` (a bare integer is bytes).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| UnitError::TooLarge);
    }
    parse_with(s, SIZE_UNITS, SIZE_ALIASES)
}

/// Parses a time such as `"8ms"`, `"1.5s"` or `"250us"`.
pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    parse_with(s, TIME_UNITS, TIME_ALIASES).map(Time)
}

fn parse_with(s: &str, units: &[(&str, u64)], aliases: &[(&str, &str)]) -> Result<u64, UnitError> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(UnitError::Negative);
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let unit = unit.trim_start();
    let unit = aliases.iter().find(|(a, _)| *a == unit).map_or(unit, |(_, canonical)| canonical);
    let &(_, scale) = units.iter().find(|(name, _)| *name == unit).ok_or(UnitError::Syntax)?;
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(UnitError::Syntax);
    }
    scaled(int, frac, scale)
}

/// `int.frac × scale`, rounded half up, with every step checked.
fn scaled(int: &str, frac: &str, scale: u64) -> Result<u64, UnitError> {
    let mut whole: u128 = 0;
    for d in int.bytes() {
        whole = whole
            .checked_mul(10)
            .and_then(|w| w.checked_add(u128::from(d - b'0')))
            .ok_or(UnitError::TooLarge)?;
    }
    let whole = whole.checked_mul(u128::from(scale)).ok_or(UnitError::TooLarge)?;
    let mut num: u128 = 0;
    let mut den: u128 = 1;
    for d in frac.bytes().take(MAX_FRACTION_DIGITS as usize) {
        num = num * 10 + u128::from(d - b'0');
        den *= 10;
    }
    // num < 10^18 and scale < 2^41, so the product fits in u128.
    let part = (num * u128::from(scale) + den / 2) / den;
    u64::try_from(whole + part).map_err(|_| UnitError::TooLarge)
}

/// Prints `value` (in base units) with the largest unit not above it, as an exact decimal,
/// e.g. `1_500_000_000_000` ps → `"1.5s"`. Every factor in `units` is a power of ten.
fn format_decimal(value: u64, units: &[(&str, u64)]) -> String {
    let &(name, scale) = units
        .iter()
        .filter(|(_, scale)| value >= *scale)
        .max_by_key(|(_, scale)| *scale)
        .unwrap_or(&units[0]);
    let (int, rem) = (value / scale, value % scale);
    if rem == 0 {
        return format!("{int}{name}");
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{rem:0width$}");
    format!("{int}.{}{name}", digits.trim_end_matches('0'))
}

/// Formats a rate so that [`parse_rate`] reads it back exactly.
pub fn format_rate(rate: Rate) -> String {
    format_decimal(rate.bps(), RATE_UNITS)
}

/// Formats a time so that [`parse_time`] reads it back exactly.
pub fn format_time(time: Time) -> String {
    format_decimal(time.ps(), TIME_UNITS)
}

/// Formats a size with the largest unit that divides it exactly (binary first), so that
/// [`parse_size`] reads it back exactly.
pub fn format_size(bytes: u64) -> String {
    let exact = SIZE_UNITS
        .iter()
        .filter(|(_, s)| *s > 1 && bytes >= *s && bytes.is_multiple_of(*s))
        .max_by_key(|(_, s)| *s);
    match exact {
        Some((name, scale)) => format!("{}{name}", bytes / scale),
        None => format!("{bytes}B"),
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnitError::Syntax => "not a number with a known unit",
            UnitError::Negative => "negative",
            UnitError::TooLarge => "too large",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // --- rates ---

    #[test]
    fn rate_units_are_1000_based() {
        assert_eq!(parse_rate("10Gbps"), Ok(Rate(10_000_000_000)));
        assert_eq!(parse_rate("10gbps"), Ok(Rate(10_000_000_000)));
        assert_eq!(parse_rate("1Tbps"), Ok(Rate(1_000_000_000_000)));
        assert_eq!(parse_rate("64Kbps"), Ok(Rate(64_000)));
        assert_eq!(parse_rate("9600bps"), Ok(Rate(9600)));
    }

    #[test]
    fn rate_decimal_is_exact() {
        assert_eq!(parse_rate("2.5Gbps"), Ok(Rate(2_500_000_000)));
        assert_eq!(parse_rate("0.1Mbps"), Ok(Rate(100_000)));
        assert_eq!(parse_rate(" 100 Gbps "), Ok(Rate::from_gbps(100)));
    }

    #[test]
    fn rate_refuses_bad_forms() {
        assert_eq!(parse_rate("100Gbs"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("100"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("Gbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate(".Gbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("1.2.3Gbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("-10Gbps"), Err(UnitError::Negative));
        assert_eq!(parse_rate("NaNGbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("infGbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("1e3Gbps"), Err(UnitError::Syntax));
        assert_eq!(parse_rate("20000000Tbps"), Err(UnitError::TooLarge));
    }

    // --- sizes ---

    #[test]
    fn size_binary_and_decimal_prefixes() {
        assert_eq!(parse_size("16MiB"), Ok(16 * 1024 * 1024));
        assert_eq!(parse_size("13GiB"), Ok(13 << 30));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("100KB"), Ok(100_000));
        assert_eq!(parse_size("9000B"), Ok(9000));
        assert_eq!(parse_size("9000"), Ok(9000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
    }

    #[test]
    fn size_refuses_bits_and_junk() {
        assert_eq!(parse_size("13GB!"), Err(UnitError::Syntax));
        assert_eq!(parse_size("10Gb"), Err(UnitError::Syntax));
        assert_eq!(parse_size("13gib"), Err(UnitError::Syntax));
        assert_eq!(parse_size(""), Err(UnitError::Syntax));
        assert_eq!(parse_size("-1KB"), Err(UnitError::Negative));
        assert_eq!(parse_size("99999999999999999999"), Err(UnitError::TooLarge));
        assert_eq!(parse_size("16777216TiB"), Err(UnitError::TooLarge));
    }

    // --- times ---

    #[test]
    fn time_units_in_picoseconds() {
        assert_eq!(parse_time("8ms"), Ok(Time::from_ms(8)));
        assert_eq!(parse_time("209ms"), Ok(Time::from_ms(209)));
        assert_eq!(parse_time("1.5s"), Ok(Time::from_ms(1500)));
        assert_eq!(parse_time("0.1ms"), Ok(Time::from_us(100)));
        assert_eq!(parse_time("250us"), Ok(Time::from_us(250)));
        assert_eq!(parse_time("250\u{b5}s"), Ok(Time::from_us(250)));
        assert_eq!(parse_time("250\u{3bc}s"), Ok(Time::from_us(250)));
        assert_eq!(parse_time("7ns"), Ok(Time::from_ns(7)));
        assert_eq!(parse_time("0s"), Ok(Time::ZERO));
    }

    #[test]
    fn time_rounds_below_a_picosecond_half_up() {
        assert_eq!(parse_time("0.0015ns"), Ok(Time(2)));
        assert_eq!(parse_time("0.0014ns"), Ok(Time(1)));
    }

    #[test]
    fn time_refuses_negative_nan_inf_overflow() {
        assert_eq!(parse_time("-1s"), Err(UnitError::Negative));
        assert_eq!(parse_time("NaNs"), Err(UnitError::Syntax));
        assert_eq!(parse_time("infs"), Err(UnitError::Syntax));
        assert_eq!(parse_time("8"), Err(UnitError::Syntax));
        assert_eq!(parse_time("8 min"), Err(UnitError::Syntax));
        // u64 picoseconds end after ≈ 213 days = 18 446 744 s.
        assert_eq!(parse_time("18446744s"), Ok(Time(18_446_744 * Time::PS_PER_S)));
        assert_eq!(parse_time("18446745s"), Err(UnitError::TooLarge));
    }

    // --- formatting ---

    #[test]
    fn format_picks_exact_units() {
        assert_eq!(format_rate(Rate::from_gbps(10)), "10Gbps");
        assert_eq!(format_rate(Rate(2_500_000_000)), "2.5Gbps");
        assert_eq!(format_rate(Rate(999)), "999bps");
        assert_eq!(format_time(Time::from_ms(1500)), "1.5s");
        assert_eq!(format_time(Time(1)), "0.001ns");
        assert_eq!(format_size(16 << 20), "16MiB");
        assert_eq!(format_size(100_000), "100KB");
        assert_eq!(format_size(1), "1B");
        assert_eq!(format_size(1_000_000_000_000), "1TB");
    }

    proptest! {
        #[test]
        fn rate_format_parse_round_trip(bps in any::<u64>()) {
            prop_assert_eq!(parse_rate(&format_rate(Rate(bps))), Ok(Rate(bps)));
        }

        #[test]
        fn time_format_parse_round_trip(ps in any::<u64>()) {
            prop_assert_eq!(parse_time(&format_time(Time(ps))), Ok(Time(ps)));
        }

        #[test]
        fn size_format_parse_round_trip(bytes in any::<u64>()) {
            prop_assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        }

        #[test]
        fn no_string_panics(s in "\\PC*") {
            let _ = parse_rate(&s);
            let _ = parse_size(&s);
            let _ = parse_time(&s);
        }

        #[test]
        fn no_number_like_string_panics(s in "[-+]?[0-9.]{0,40} ?(bps|Gbps|GiB|KB|B|ms|\u{b5}s|s|x)?") {
            let _ = parse_rate(&s);
            let _ = parse_size(&s);
            let _ = parse_time(&s);
        }
    }
}
