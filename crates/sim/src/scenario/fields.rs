//! Typed reads of one TOML table, each failing with the field's full path, its value and an
//! example of what was expected.

use std::ops::RangeInclusive;

use toml::{Table, Value};

use super::error::ScenarioError;
use super::model::{Latency, Pause};
use super::units::{self, UnitError};
use crate::time::Time;
use crate::units::Rate;

pub(crate) const RATE_EXPECTED: &str = "a rate such as \"10Gbps\" or \"500Mbps\"";
pub(crate) const SIZE_EXPECTED: &str = "a size such as \"13GiB\" or \"500MB\"";
pub(crate) const TIME_EXPECTED: &str = "a time such as \"8ms\" or \"1.5s\"";
pub(crate) const LATENCY_EXPECTED: &str = "a time such as \"400us\", or a non-empty array of times to draw from such as [\"20us\", \"1ms\"]";

pub(crate) const PAUSES_EXPECTED: &str = "an array of [start, length] pairs of times, such as [[\"12ms\", \"2.5ms\"], [\"40ms\", \"1ms\"]]";
const PAUSE_EXPECTED: &str = "a [start, length] pair of times, such as [\"12ms\", \"2.5ms\"]";

type Result<T> = std::result::Result<T, ScenarioError>;

/// One table of the scenario and its path (`scenario.flow[0]`).
pub(crate) struct Fields<'a> {
    table: &'a Table,
    path: String,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(table: &'a Table, path: impl Into<String>) -> Fields<'a> {
        Fields { table, path: path.into() }
    }

    /// The table itself.
    pub(crate) fn table_ref(&self) -> &'a Table {
        self.table
    }

    /// The keys the table sets.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'a str> {
        self.table.keys().map(String::as_str)
    }

    /// Whether the table sets `key` at all.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    pub(crate) fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The error for `key` not meeting `expected`, showing its value or saying it is missing.
    pub(crate) fn error(&self, key: &str, expected: impl Into<String>) -> ScenarioError {
        match self.table.get(key) {
            Some(v) => ScenarioError::field(&self.path(key), v, expected),
            None => ScenarioError::missing(&self.path(key), expected),
        }
    }

    /// Fails with [`Fields::error`] unless `ok`.
    pub(crate) fn ensure(
        &self,
        key: &str,
        ok: bool,
        expected: impl FnOnce() -> String,
    ) -> Result<()> {
        if ok { Ok(()) } else { Err(self.error(key, expected())) }
    }

    /// `value`, or the missing-field error.
    pub(crate) fn required<T>(&self, key: &str, value: Option<T>, expected: &str) -> Result<T> {
        value.ok_or_else(|| self.error(key, expected))
    }

    /// Reads `key` with `read`, which returns `None` when the value has the wrong form.
    pub(crate) fn read<T>(
        &self,
        key: &str,
        expected: &str,
        read: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.table.get(key) {
            None => Ok(None),
            Some(v) => {
                read(v).map(Some).ok_or_else(|| ScenarioError::field(&self.path(key), v, expected))
            }
        }
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>> {
        self.read(key, "a string", Value::as_str)
    }

    pub(crate) fn boolean(&self, key: &str) -> Result<Option<bool>> {
        self.read(key, "true or false", Value::as_bool)
    }

    /// An integer within `range`.
    pub(crate) fn integer(&self, key: &str, range: RangeInclusive<i64>) -> Result<Option<i64>> {
        let expected = format!("an integer from {} to {}", range.start(), range.end());
        self.read(key, &expected, |v| v.as_integer().filter(|i| range.contains(i)))
    }

    /// A clock offset bound in ppm (integer or not) from 0 to `max`: the `clock_ppm` of
    /// burst sources and of the topology's ports.
    pub(crate) fn ppm(&self, key: &str, max: f64) -> Result<Option<f64>> {
        let expected = format!("a clock offset bound in ppm from 0 to {max}, such as 20");
        self.read(key, &expected, |v| {
            let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64))?;
            (0.0..=max).contains(&x).then_some(x)
        })
    }

    /// An integer from `allowed`.
    pub(crate) fn integer_of(&self, key: &str, allowed: &[i64]) -> Result<Option<i64>> {
        let list: Vec<String> = allowed.iter().map(i64::to_string).collect();
        let expected = format!("one of {}", list.join(", "));
        self.read(key, &expected, |v| v.as_integer().filter(|i| allowed.contains(i)))
    }

    /// A string naming one of `options`.
    pub(crate) fn choice<T: Copy>(&self, key: &str, options: &[(&str, T)]) -> Result<Option<T>> {
        let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        let expected = format!("one of {}", names.join(", "));
        self.read(key, &expected, |v| {
            let s = v.as_str()?;
            options.iter().find(|(n, _)| *n == s).map(|(_, t)| *t)
        })
    }

    /// An array of integers, each within `range`.
    pub(crate) fn integers(
        &self,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<Option<Vec<i64>>> {
        let expected = format!("an array of integers from {} to {}", range.start(), range.end());
        self.read(key, &expected, |v| {
            v.as_array()?.iter().map(|x| x.as_integer().filter(|i| range.contains(i))).collect()
        })
    }

    /// An array of strings; a bad element is reported at its own path (`key[i]`).
    pub(crate) fn strings(&self, key: &str, expected: &str) -> Result<Option<Vec<&'a str>>> {
        let Some(v) = self.table.get(key) else {
            return Ok(None);
        };
        let items = v.as_array().ok_or_else(|| {
            ScenarioError::field(&self.path(key), v, format!("an array of {expected}"))
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str().ok_or_else(|| {
                    ScenarioError::field(&format!("{}[{i}]", self.path(key)), x, expected)
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// A value with a unit, read by `parse`; `text` is what to expect after a malformed, a
    /// negative and a too-large value.
    fn unit<T>(
        &self,
        key: &str,
        parse: impl FnOnce(&Value) -> std::result::Result<T, UnitError>,
        text: [&str; 3],
    ) -> Result<Option<T>> {
        let Some(v) = self.table.get(key) else {
            return Ok(None);
        };
        parse(v).map(Some).map_err(|e| {
            let expected = match e {
                UnitError::Syntax => text[0],
                UnitError::Negative => text[1],
                UnitError::TooLarge => text[2],
            };
            ScenarioError::field(&self.path(key), v, expected)
        })
    }

    /// A rate above zero, such as `"10Gbps"` (zero is refused like a negative rate).
    pub(crate) fn rate(&self, key: &str) -> Result<Option<Rate>> {
        let parse = |v: &Value| match v.as_str().map_or(Err(UnitError::Syntax), units::parse_rate) {
            Ok(r) if r.bps() == 0 => Err(UnitError::Negative),
            other => other,
        };
        let text = [
            RATE_EXPECTED,
            "a rate above 0, such as \"10Gbps\"",
            "a rate of at most 18446744Tbps (64-bit bit/s)",
        ];
        self.unit(key, parse, text)
    }

    /// A size in bytes: a string with a unit, or a bare integer of bytes.
    pub(crate) fn size(&self, key: &str) -> Result<Option<u64>> {
        let parse = |v: &Value| match v {
            Value::Integer(i) => u64::try_from(*i).map_err(|_| UnitError::Negative),
            Value::String(s) => units::parse_size(s),
            _ => Err(UnitError::Syntax),
        };
        let text = [
            SIZE_EXPECTED,
            "a size of 0 or more, such as \"16MiB\"",
            "a size of at most 16777215TiB (64-bit bytes)",
        ];
        self.unit(key, parse, text)
    }

    /// A time of zero or more, such as `"8ms"`.
    pub(crate) fn time(&self, key: &str) -> Result<Option<Time>> {
        let parse = |v: &Value| v.as_str().map_or(Err(UnitError::Syntax), units::parse_time);
        let text = [
            TIME_EXPECTED,
            "a time of 0 or more, such as \"8ms\"",
            "a time of at most 18446744s (64-bit picoseconds)",
        ];
        self.unit(key, parse, text)
    }

    /// A latency: one time (`"400us"`), or a non-empty array of times drawn from uniformly
    /// (`["20us", "35us", "1.2ms"]`); a bad element is reported at its own path (`key[i]`).
    pub(crate) fn latency(&self, key: &str) -> Result<Option<Latency>> {
        let Some(v) = self.table.get(key) else {
            return Ok(None);
        };
        let Some(items) = v.as_array() else {
            return Ok(self.time(key)?.map(Latency::Fixed));
        };
        if items.is_empty() {
            return Err(ScenarioError::field(&self.path(key), v, LATENCY_EXPECTED));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str().ok_or(UnitError::Syntax).and_then(units::parse_time).map_err(|_| {
                    ScenarioError::field(&format!("{}[{i}]", self.path(key)), x, TIME_EXPECTED)
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(|v| Some(Latency::Samples(v)))
    }

    /// Pauses of a port: an array of `[start, length]` time pairs, ascending, each starting at
    /// or after the previous one's end, each at least 1 ps long; a bad pair is reported at its
    /// own path (`key[i]`). Absent: none.
    pub(crate) fn pauses(&self, key: &str) -> Result<Vec<Pause>> {
        let Some(v) = self.table.get(key) else {
            return Ok(Vec::new());
        };
        let Some(items) = v.as_array() else {
            return Err(ScenarioError::field(&self.path(key), v, PAUSES_EXPECTED));
        };
        let mut pauses: Vec<Pause> = Vec::with_capacity(items.len());
        for (i, x) in items.iter().enumerate() {
            let at = format!("{}[{i}]", self.path(key));
            let pair = x.as_array().filter(|p| p.len() == 2);
            let times = pair.map(|p| {
                p.iter()
                    .map(|t| t.as_str().ok_or(UnitError::Syntax).and_then(units::parse_time))
                    .collect::<std::result::Result<Vec<Time>, _>>()
            });
            let Some(Ok(t)) = times else {
                return Err(ScenarioError::field(&at, x, PAUSE_EXPECTED));
            };
            let (start, length) = (t[0], t[1]);
            if length == Time::ZERO {
                return Err(ScenarioError::field(
                    &at,
                    x,
                    "a pause longer than 0, such as [\"12ms\", \"2.5ms\"]",
                ));
            }
            if let Some(prev) = pauses.last().filter(|p| start < p.end) {
                let expected = format!(
                    "a pause starting at or after the previous one ends ({}), pauses in ascending order",
                    prev.end
                );
                return Err(ScenarioError::field(&at, x, expected));
            }
            pauses.push(Pause { start, end: Time(start.ps().saturating_add(length.ps())) });
        }
        Ok(pauses)
    }

    /// The tables of an array of tables (its shape was checked by `schema::check_keys`).
    pub(crate) fn tables(&self, key: &str) -> Vec<Fields<'a>> {
        let items = self.table.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(Fields::new(v.as_table()?, format!("{}[{i}]", self.path(key))))
            })
            .collect()
    }

    /// A sub-table, or an empty one when absent (its shape was checked by `schema::check_keys`).
    pub(crate) fn table(&self, key: &str) -> Fields<'a> {
        static EMPTY: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
        let t = self
            .table
            .get(key)
            .and_then(Value::as_table)
            .unwrap_or_else(|| EMPTY.get_or_init(Table::new));
        Fields::new(t, self.path(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn rate_zero_and_negative_say_above_zero() {
        let t = with("a = \"0Gbps\"\nb = \"-1Gbps\"\nc = 10\n");
        let f = Fields::new(&t, "scenario.x");
        assert_eq!(
            f.rate("a").unwrap_err().to_string(),
            "scenario.x.a = \"0Gbps\": expected a rate above 0, such as \"10Gbps\""
        );
        assert!(f.rate("b").unwrap_err().to_string().contains("above 0"));
        assert_eq!(
            f.rate("c").unwrap_err().to_string(),
            "scenario.x.c = 10: expected a rate such as \"10Gbps\" or \"500Mbps\""
        );
        assert_eq!(f.rate("absent").unwrap(), None);
    }

    #[test]
    fn size_accepts_bare_integers_not_negative_ones() {
        let t = with("a = 9000\nb = -1\nc = 1.5\n");
        let f = Fields::new(&t, "s");
        assert_eq!(f.size("a").unwrap(), Some(9000));
        assert_eq!(
            f.size("b").unwrap_err().to_string(),
            "s.b = -1: expected a size of 0 or more, such as \"16MiB\""
        );
        assert!(f.size("c").unwrap_err().to_string().contains(SIZE_EXPECTED));
    }

    #[test]
    fn time_float_without_unit_is_refused() {
        let t = with("a = 1.5\nb = \"nan\"\n");
        let f = Fields::new(&t, "s");
        assert_eq!(
            f.time("a").unwrap_err().to_string(),
            format!("s.a = 1.5: expected {TIME_EXPECTED}")
        );
        assert!(f.time("b").is_err());
    }

    #[test]
    fn integer_range_and_choice_messages() {
        let t = with("a = 256\nb = \"wfq\"\nc = [1, 64]\n");
        let f = Fields::new(&t, "s");
        assert_eq!(
            f.integer("a", 1..=255).unwrap_err().to_string(),
            "s.a = 256: expected an integer from 1 to 255"
        );
        let e = f.choice("b", &[("fifo", 0), ("drr", 1)]).unwrap_err();
        assert_eq!(e.to_string(), "s.b = \"wfq\": expected one of \"fifo\", \"drr\"");
        assert!(f.integers("c", 0..=63).unwrap_err().to_string().contains("from 0 to 63"));
    }

    #[test]
    fn required_missing_names_path() {
        let t = Table::new();
        let f = Fields::new(&t, "scenario.topology");
        let e = f.required::<Rate>("rtt", None, TIME_EXPECTED).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("scenario.topology.rtt is missing: expected {TIME_EXPECTED}")
        );
    }
}
