//! Checked big-endian reads: every read names its field and fails with a [`DecodeError`]
//! instead of panicking, so the parsers above stay total.

use crate::error::DecodeError;

/// `len` bytes of `buf` from `at`, or a truncation error naming `field`.
#[inline]
pub(crate) fn take<'a>(
    buf: &'a [u8],
    at: usize,
    len: usize,
    field: &'static str,
) -> Result<&'a [u8], DecodeError> {
    let end = at.checked_add(len);
    match end.and_then(|end| buf.get(at..end)) {
        Some(s) => Ok(s),
        None => Err(DecodeError::truncated(at, field, buf.len().saturating_sub(at), len)),
    }
}

#[inline]
pub(crate) fn u8_at(buf: &[u8], at: usize, field: &'static str) -> Result<u8, DecodeError> {
    Ok(take(buf, at, 1, field)?[0])
}

#[inline]
pub(crate) fn u16_at(buf: &[u8], at: usize, field: &'static str) -> Result<u16, DecodeError> {
    let s = take(buf, at, 2, field)?;
    Ok(u16::from_be_bytes([s[0], s[1]]))
}

/// Big-endian unsigned integer of 1..=8 bytes from an already length-checked slice.
#[inline]
pub(crate) fn be(s: &[u8]) -> u64 {
    s.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_past_the_end_reports_what_remains() {
        let e = take(&[1, 2, 3], 2, 4, "x").unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (2, "x", 1));
        let e = take(&[1, 2, 3], 7, 1, "x").unwrap_err();
        assert_eq!((e.offset, e.value), (7, 0));
        assert!(take(&[1], usize::MAX, 2, "x").is_err());
    }

    #[test]
    fn reads_are_big_endian() {
        let b = [0x12, 0x34, 0x56, 0x78, 0x9a];
        assert_eq!(u16_at(&b, 1, "f").unwrap(), 0x3456);
        assert_eq!(be(&b[1..5]), 0x3456_789a);
        assert_eq!(be(&b[..3]), 0x12_3456);
    }
}
