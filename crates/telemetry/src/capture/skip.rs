//! Frames of a capture that carry no telemetry report, counted by why, so a pass says what it
//! left out rather than dropping it in silence.

use super::file::Frame;
use super::packet::{L4, parse_packet};
use serde::Serialize;

/// Why a frame was not decoded as a report, by count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Headers that cannot be read: cut, malformed, or a link type we do not parse.
    pub unreadable: u64,
    /// No IPv4/IPv6 packet (ARP, LLDP, other EtherTypes, an MPLS stack over something else).
    pub not_ip: u64,
    /// IP, but not UDP (or a non-first fragment, which has no UDP header).
    pub not_udp: u64,
    /// UDP to a port that is not a report port.
    pub other_port: u64,
}

impl Skipped {
    /// Count `frame`, which [`crate::pipeline`] found to carry no report on `ports`.
    pub fn count(&mut self, frame: &Frame<'_>) {
        let slot = match parse_packet(frame) {
            Err(_) => &mut self.unreadable,
            Ok(rec) => match (rec.flow, rec.l4) {
                (None, _) => &mut self.not_ip,
                (Some(_), L4::Udp { .. }) => &mut self.other_port,
                (Some(_), _) => &mut self.not_udp,
            },
        };
        *slot += 1;
    }

    pub fn total(&self) -> u64 {
        self.unreadable + self.not_ip + self.not_udp + self.other_port
    }

    /// `"3 not IP, 2 UDP to other ports"`: the reasons that occurred, or `""`.
    pub fn summary(&self) -> String {
        [
            (self.unreadable, "unreadable"),
            (self.not_ip, "not IP"),
            (self.not_udp, "not UDP"),
            (self.other_port, "UDP to other ports"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Linktype;

    fn frame(data: &[u8]) -> Frame<'_> {
        Frame { ts_ns: 0, interface: 0, linktype: Linktype::ETHERNET, orig_len: 0, data }
    }

    #[test]
    fn each_reason_is_counted_and_summarised() {
        let mut s = Skipped::default();
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
        arp.resize(42, 0);
        s.count(&frame(&arp));
        let mut udp = vec![0; 12];
        udp.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        udp.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0]);
        s.count(&frame(&udp));
        let mut icmp = udp.clone();
        icmp[23] = 1;
        s.count(&frame(&icmp));
        s.count(&frame(&udp[..20]));
        assert_eq!(s, Skipped { unreadable: 1, not_ip: 1, not_udp: 1, other_port: 1 });
        assert_eq!(s.total(), 4);
        assert_eq!(s.summary(), "1 unreadable, 1 not IP, 1 not UDP, 1 UDP to other ports");
        assert_eq!(Skipped::default().summary(), "");
    }
}
