//! Link-layer header types: the number a capture file stores to say how each frame begins.

use serde::Serialize;

/// A LINKTYPE_ value (tcpdump.org "Link-layer header types", draft-ietf-opsawg-pcaplinktype).
/// Unknown values are kept as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Linktype(pub u16);

impl Linktype {
    /// LINKTYPE_ETHERNET = 1: IEEE 802.3 Ethernet, VLAN tags inline.
    pub const ETHERNET: Linktype = Linktype(1);
    /// LINKTYPE_RAW = 101: the frame is an IPv4 or IPv6 packet (version nibble says which).
    pub const RAW: Linktype = Linktype(101);
    /// LINKTYPE_LINUX_SLL = 113: Linux "cooked" header v1, 16 bytes (`tcpdump -i any`).
    pub const LINUX_SLL: Linktype = Linktype(113);
    /// LINKTYPE_IPV4 = 228: raw IPv4.
    pub const IPV4: Linktype = Linktype(228);
    /// LINKTYPE_IPV6 = 229: raw IPv6.
    pub const IPV6: Linktype = Linktype(229);
    /// LINKTYPE_LINUX_SLL2 = 276: Linux cooked header v2, 20 bytes, with the interface index
    /// (`tcpdump -i any -y LINUX_SLL2`).
    pub const LINUX_SLL2: Linktype = Linktype(276);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linktype_numbers_are_tcpdumps() {
        assert_eq!(
            [Linktype::ETHERNET, Linktype::RAW, Linktype::LINUX_SLL, Linktype::IPV4],
            [Linktype(1), Linktype(101), Linktype(113), Linktype(228)]
        );
        assert_eq!([Linktype::IPV6, Linktype::LINUX_SLL2], [Linktype(229), Linktype(276)]);
    }
}
