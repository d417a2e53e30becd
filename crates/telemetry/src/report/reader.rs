//! A bounds-checked big-endian reader whose errors carry offsets into the caller's whole
//! buffer, so the version parsers never index and never shift offsets by hand.

use crate::error::DecodeError;

pub(crate) struct Reader<'a> {
    /// The whole payload up to the end of the current unit (a report may end before the
    /// payload does); offsets are positions in it.
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// `N` bytes for `field`, or a truncation error at the field's first byte.
    #[inline]
    pub(crate) fn bytes<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let end = self.pos.checked_add(N);
        match end.and_then(|end| self.buf.get(self.pos..end)) {
            Some(b) => {
                let mut a = [0; N];
                a.copy_from_slice(b);
                self.pos += N;
                Ok(a)
            }
            None => Err(DecodeError::truncated(self.pos, field, self.remaining(), N)),
        }
    }

    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.bytes(field).map(u16::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.bytes(field).map(u32::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, DecodeError> {
        self.bytes(field).map(u64::from_be_bytes)
    }

    /// Steps over `n` bytes that must be there.
    pub(crate) fn skip(&mut self, n: usize, field: &'static str) -> Result<(), DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::truncated(self.pos, field, self.remaining(), n));
        }
        self.pos += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reads_big_endian_and_advances() {
        let mut r = Reader::new(&[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 2);
        assert_eq!(r.u16("a").unwrap(), 0x0102);
        assert_eq!(r.u32("b").unwrap(), 0x0304_0506);
        assert_eq!(r.pos(), 8);
        let e = r.u64("c").unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (8, "c", 6));
    }

    #[test]
    fn reader_past_the_end_never_panics() {
        let mut r = Reader::new(&[1, 2], 5);
        assert_eq!(r.u16("x").unwrap_err().value, 0);
        assert_eq!(r.skip(usize::MAX, "y").unwrap_err().offset, 5);
        let mut r = Reader::new(&[1, 2, 3], 1);
        r.skip(2, "z").unwrap();
        assert_eq!(r.pos(), 3);
    }
}
