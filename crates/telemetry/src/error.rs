//! The decode error: where in the input, which field, what it held, what was expected.

use std::borrow::Cow;
use std::fmt;

/// A malformed input. `offset` counts bytes from the start of the buffer handed to the
/// outermost parser (the UDP payload for reports, the frame for packets), so a user can find
/// the byte in a hex dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub field: &'static str,
    pub value: u64,
    pub expected: Cow<'static, str>,
}

impl DecodeError {
    pub fn new(
        offset: usize,
        field: &'static str,
        value: u64,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        DecodeError { offset, field, value, expected: expected.into() }
    }

    /// The input ended early: `value` is how many bytes were there, `needed` how many the
    /// field requires from `offset`.
    pub fn truncated(offset: usize, field: &'static str, available: usize, needed: usize) -> Self {
        DecodeError::new(
            offset,
            field,
            available as u64,
            format!("{needed} bytes, but only {available} remain"),
        )
    }

    /// The same error seen from an enclosing buffer that starts `base` bytes earlier.
    pub fn shifted(mut self, base: usize) -> Self {
        // A field past the end of a sub-slice can sit at any computed position; never overflow.
        self.offset = self.offset.saturating_add(base);
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "byte {}: {} = {}, expected {}",
            self.offset, self.field, self.value, self.expected
        )
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_offset_field_value_and_expectation() {
        let e = DecodeError::new(12, "shim.length", 8, "≥ 9 words for 2 hops × 2 words + header");
        assert_eq!(
            e.to_string(),
            "byte 12: shim.length = 8, expected ≥ 9 words for 2 hops × 2 words + header"
        );
    }

    #[test]
    fn shifted_moves_the_offset_into_the_outer_buffer() {
        let e = DecodeError::truncated(4, "hop", 3, 24).shifted(42);
        assert_eq!(e.offset, 46);
        assert_eq!(e.to_string(), "byte 46: hop = 3, expected 24 bytes, but only 3 remain");
    }
}
