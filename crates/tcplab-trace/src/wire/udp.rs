//! UDP headers (RFC 768).

use super::checksum;
use super::{be16, put16, Error, Result};
use std::net::{Ipv4Addr, Ipv6Addr};

pub const HEADER_LEN: usize = 8;

/// A zero-copy view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = UdpPacket { buffer };
        if p.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if usize::from(p.len()) < HEADER_LEN {
            return Err(Error::Malformed("UDP length below 8"));
        }
        Ok(p)
    }

    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }
    /// Length field: header + data.
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }
    /// The captured payload, bounded by the length field.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = usize::from(self.len()).min(b.len()).max(HEADER_LEN);
        &b[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Fills the checksum over the whole buffer with the IPv4 pseudo-header. A computed value of
    /// zero is sent as 0xffff (RFC 768: zero means "no checksum").
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let len = self.buffer.as_ref().len() as u32;
        self.fill_with(checksum::pseudo_header_v4(
            src,
            dst,
            super::ip_proto::UDP,
            len,
        ));
    }

    /// As [`Self::fill_checksum_v4`] with the IPv6 pseudo-header (mandatory in IPv6).
    pub fn fill_checksum_v6(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        let len = self.buffer.as_ref().len() as u32;
        self.fill_with(checksum::pseudo_header_v6(
            src,
            dst,
            super::ip_proto::UDP,
            len,
        ));
    }

    fn fill_with(&mut self, pseudo: u64) {
        let b = self.buffer.as_mut();
        put16(b, 6, 0);
        let mut c = !checksum::fold(checksum::accumulate(pseudo, b));
        if c == 0 {
            c = 0xffff;
        }
        put16(b, 6, c);
    }
}

/// The parsed form of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Data length (without the header).
    pub payload_len: usize,
}

impl UdpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> UdpRepr {
        UdpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - HEADER_LEN,
        }
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (checksum zero; fill it once the payload is in place).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut UdpPacket<T>) {
        let b = p.buffer.as_mut();
        put16(b, 0, self.src_port);
        put16(b, 2, self.dst_port);
        put16(b, 4, (HEADER_LEN + self.payload_len) as u16);
        put16(b, 6, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_udp_emit_then_parse_roundtrip_with_checksum() {
        let r = UdpRepr {
            src_port: 1234,
            dst_port: 5678,
            payload_len: 3,
        };
        let mut buf = vec![0u8; 11];
        buf[8..].copy_from_slice(b"abc");
        let mut p = UdpPacket::new_unchecked(&mut buf[..]);
        r.emit(&mut p);
        let (s, d) = (Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8));
        p.fill_checksum_v4(s, d);
        let p = UdpPacket::new_checked(&buf[..]).unwrap();
        assert_eq!(UdpRepr::parse(&p), r);
        assert_eq!(p.payload(), b"abc");
        let acc = checksum::pseudo_header_v4(s, d, 17, 11);
        assert_eq!(checksum::fold(checksum::accumulate(acc, &buf)), 0xffff);
    }

    #[test]
    fn test_udp_bad_length_rejected() {
        let mut buf = [0u8; 8];
        buf[5] = 7;
        assert!(matches!(
            UdpPacket::new_checked(&buf[..]),
            Err(Error::Malformed(_))
        ));
        assert_eq!(
            UdpPacket::new_checked(&buf[..7]).err(),
            Some(Error::Truncated)
        );
    }
}
