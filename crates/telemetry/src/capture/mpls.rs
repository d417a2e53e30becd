//! Ethernet frames whose IP packet rides under an MPLS label stack. stratum/fabric-tna sends
//! its INT reports this way between leaf and spine: the report route pushes a segment-routing
//! label (`build_int_local_report` with `send_report_to_spine` in fabric-tna's PTF
//! `fabric_test.py` adds `MPLS(label=MPLS_LABEL_2, ttl=DEFAULT_MPLS_TTL)` between the Ethernet
//! and IPv4 headers). `etherparse` stops at such frames, so the label stack is walked here and
//! the packet parsed from its IP header on.

/// EtherTypes of an MPLS label stack: unicast and multicast (RFC 3032 §2.1, RFC 5332 §4).
pub const ETHERTYPE_MPLS_UNICAST: u16 = 0x8847;
pub const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
/// VLAN tag protocol ids that may precede the label stack: 802.1Q, 802.1ad, pre-standard QinQ.
const TPIDS: [u16; 3] = [0x8100, 0x88A8, 0x9100];
/// One label stack entry: label (20), traffic class (3), bottom of stack S (1), TTL (8)
/// (RFC 3032 §2.1).
const LABEL_BYTES: usize = 4;
/// Labels walked before giving up: deeper stacks than this are not a report path.
const MAX_LABELS: usize = 8;
/// VLAN tags skipped before the label stack.
const MAX_TAGS: usize = 3;

/// Where the IP packet under an MPLS label stack starts in an Ethernet frame, or `None` when
/// the frame carries no label stack, the stack has no bottom within [`MAX_LABELS`], or what
/// lies under it is not IPv4 or IPv6 (by its version nibble: MPLS does not say; RFC 4928 §1
/// is how routers tell, and a pseudowire control word starts with 0).
pub fn ip_under_labels(frame: &[u8]) -> Option<usize> {
    let be16 = |at: usize| frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let mut at = 12;
    let mut ethertype = be16(at)?;
    for _ in 0..MAX_TAGS {
        if !TPIDS.contains(&ethertype) {
            break;
        }
        at += 4;
        ethertype = be16(at)?;
    }
    if ethertype != ETHERTYPE_MPLS_UNICAST && ethertype != ETHERTYPE_MPLS_MULTICAST {
        return None;
    }
    let mut label = at + 2;
    for _ in 0..MAX_LABELS {
        let bottom = frame.get(label + 2)? & 1 == 1;
        label += LABEL_BYTES;
        if bottom {
            return matches!(frame.get(label)? >> 4, 4 | 6).then_some(label);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(tags: usize, labels: &[(u32, bool)], first: u8) -> Vec<u8> {
        let mut f = vec![0; 12];
        for _ in 0..tags {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64]);
        }
        f.extend_from_slice(&ETHERTYPE_MPLS_UNICAST.to_be_bytes());
        for &(l, s) in labels {
            let w = l << 12 | u32::from(s) << 8 | 64;
            f.extend_from_slice(&w.to_be_bytes());
        }
        f.push(first);
        f
    }

    #[test]
    fn ethertypes_are_rfc_3032_and_5332() {
        assert_eq!((ETHERTYPE_MPLS_UNICAST, ETHERTYPE_MPLS_MULTICAST), (0x8847, 0x8848));
    }

    #[test]
    fn one_label_then_ipv4_as_fabric_tna_sends_to_a_spine() {
        assert_eq!(ip_under_labels(&labelled(0, &[(200, true)], 0x45)), Some(18));
        assert_eq!(ip_under_labels(&labelled(1, &[(100, false), (200, true)], 0x60)), Some(26));
    }

    #[test]
    fn no_bottom_no_ip_or_no_labels_is_none() {
        assert_eq!(ip_under_labels(&labelled(0, &[(200, false)], 0x45)), None);
        assert_eq!(ip_under_labels(&labelled(0, &[(200, true)], 0x00)), None, "control word");
        let deep: Vec<_> = (0..9).map(|k| (k, k == 8)).collect();
        assert_eq!(ip_under_labels(&labelled(0, &deep, 0x45)), None);
        let mut plain = vec![0; 12];
        plain.extend_from_slice(&[0x08, 0x00, 0x45]);
        assert_eq!(ip_under_labels(&plain), None);
        assert_eq!(ip_under_labels(&[0; 5]), None);
    }
}
