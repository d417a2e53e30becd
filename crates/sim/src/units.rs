//! Unit newtypes that keep rates and sizes from being confused (htsim `config.h`, minim
//! `units.rs`).

use crate::time::Time;

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    #[inline]
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub const fn from_gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub const fn from_mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }

    /// Time to put `bytes` on the wire at this rate, rounded up to a whole picosecond so that
    /// back-to-back packets never overlap.
    #[inline]
    pub fn serialization_time(self, bytes: u64) -> Time {
        debug_assert!(self.0 > 0);
        let bits = bytes as u128 * 8 * Time::PS_PER_S as u128;
        Time(bits.div_ceil(self.0 as u128) as u64)
    }

    /// Bytes that this rate carries in `span` (rounded down).
    #[inline]
    pub fn bytes_in(self, span: Time) -> u64 {
        (self.0 as u128 * span.ps() as u128 / (8 * Time::PS_PER_S as u128)) as u64
    }
}

/// Ethernet framing that occupies the wire but not the IP MTU: preamble + SFD (8), MAC header
/// (14), FCS (4) and the inter-frame gap (12) — IEEE 802.3 clause 3/4.
pub const ETHERNET_OVERHEAD_BYTES: u32 = 38;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_at_100g_is_80_ps() {
        assert_eq!(Rate::from_gbps(100).serialization_time(1), Time(80));
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s.
        assert_eq!(Rate(3).serialization_time(1).ps(), 2_666_666_666_667);
    }

    #[test]
    fn bytes_in_inverts_serialization() {
        let r = Rate::from_gbps(10);
        assert_eq!(r.bytes_in(Time::from_ms(1)), 1_250_000);
    }
}
