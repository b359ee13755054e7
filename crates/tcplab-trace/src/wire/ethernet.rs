//! Ethernet II frames (IEEE 802.3 clause 3 with an EtherType), with 802.1Q / 802.1ad VLAN tags
//! skipped by [`EthernetFrame::payload_offset`]. The frame check sequence is not part of what
//! captures hold for LINKTYPE_ETHERNET and is neither expected nor emitted.

use super::{be16, put16, Error, Result};

/// EtherType values used here (IEEE "EtherType" registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtherType(pub u16);

impl EtherType {
    pub const IPV4: EtherType = EtherType(0x0800);
    pub const ARP: EtherType = EtherType(0x0806);
    pub const VLAN: EtherType = EtherType(0x8100);
    pub const QINQ: EtherType = EtherType(0x88a8);
    pub const IPV6: EtherType = EtherType(0x86dd);
}

/// A 48-bit MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    /// A locally administered unicast address derived from an IPv4 address: 02:00:a:b:c:d.
    /// Used to give simulated hosts stable, distinct MACs (IEEE 802 "U/L bit" = local).
    pub fn from_ipv4(ip: std::net::Ipv4Addr) -> EthernetAddress {
        let o = ip.octets();
        EthernetAddress([0x02, 0x00, o[0], o[1], o[2], o[3]])
    }
}

impl std::fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// Length of the untagged Ethernet II header.
pub const HEADER_LEN: usize = 14;

/// A zero-copy view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// A view after checking that the untagged header fits.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(EthernetFrame { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> EthernetAddress {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[0..6]);
        EthernetAddress(a)
    }

    pub fn src_addr(&self) -> EthernetAddress {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[6..12]);
        EthernetAddress(a)
    }

    /// The EtherType field right after the addresses (may be a VLAN TPID).
    pub fn ethertype(&self) -> EtherType {
        EtherType(be16(self.buffer.as_ref(), 12))
    }

    /// The EtherType of the payload and its offset, after skipping any number of 802.1Q/802.1ad
    /// tags (4 bytes each: TPID, TCI).
    pub fn payload_offset(&self) -> Result<(EtherType, usize)> {
        let b = self.buffer.as_ref();
        let mut at = 12;
        loop {
            if b.len() < at + 2 {
                return Err(Error::Truncated);
            }
            let et = EtherType(be16(b, at));
            if et == EtherType::VLAN || et == EtherType::QINQ {
                at += 4;
                continue;
            }
            return Ok((et, at + 2));
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[0..6].copy_from_slice(&a.0);
    }

    pub fn set_src_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[6..12].copy_from_slice(&a.0);
    }

    pub fn set_ethertype(&mut self, t: EtherType) {
        put16(self.buffer.as_mut(), 12, t.0);
    }
}

/// The parsed form of an (untagged) Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    pub src_addr: EthernetAddress,
    pub dst_addr: EthernetAddress,
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Parses the header; VLAN tags are skipped and the inner EtherType reported.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<EthernetRepr> {
        let (ethertype, _) = frame.payload_offset()?;
        Ok(EthernetRepr {
            src_addr: frame.src_addr(),
            dst_addr: frame.dst_addr(),
            ethertype,
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 14-byte header at the start of the frame's buffer.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_ethernet_emit_then_parse_roundtrip() {
        let repr = EthernetRepr {
            src_addr: EthernetAddress([2, 0, 10, 0, 0, 1]),
            dst_addr: EthernetAddress([2, 0, 10, 0, 0, 2]),
            ethertype: EtherType::IPV4,
        };
        let mut buf = [0u8; HEADER_LEN];
        repr.emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
        let parsed = EthernetRepr::parse(&EthernetFrame::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(parsed, repr);
        assert_eq!(&buf[12..14], &[0x08, 0x00]);
    }

    #[test]
    fn test_ethernet_vlan_tags_skipped() {
        let mut buf = [0u8; 22];
        buf[12..14].copy_from_slice(&[0x88, 0xa8]);
        buf[16..18].copy_from_slice(&[0x81, 0x00]);
        buf[20..22].copy_from_slice(&[0x86, 0xdd]);
        let f = EthernetFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(f.payload_offset().unwrap(), (EtherType::IPV6, 22));
        assert_eq!(f.payload_offset().map(|x| x.1), Ok(22));
        // A tag whose inner EtherType is cut off is truncated, not a panic.
        assert_eq!(
            EthernetFrame::new_checked(&buf[..19])
                .unwrap()
                .payload_offset(),
            Err(Error::Truncated)
        );
    }

    #[test]
    fn test_ethernet_short_buffer_rejected() {
        assert_eq!(
            EthernetFrame::new_checked(&[0u8; 13][..]).err(),
            Some(Error::Truncated)
        );
    }

    #[test]
    fn test_ethernet_mac_from_ipv4_is_local_unicast() {
        let m = EthernetAddress::from_ipv4(std::net::Ipv4Addr::new(10, 1, 2, 3));
        assert_eq!(m.0, [2, 0, 10, 1, 2, 3]);
        assert_eq!(m.to_string(), "02:00:0a:01:02:03");
    }
}
