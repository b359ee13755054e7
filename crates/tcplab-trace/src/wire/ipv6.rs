//! IPv6 headers (RFC 8200 §3) and the walk over extension headers (§4) to the upper layer.

use super::ip_proto;
use super::{be16, put16, Error, Result};
use std::net::Ipv6Addr;

pub const HEADER_LEN: usize = 40;

/// The error [`Ipv6Packet::upper_layer`] gives for a fragment other than an atomic one.
pub const FRAGMENT: Error = Error::Malformed("IPv6 fragment (not reassembled)");

/// A zero-copy view of an IPv6 packet (fixed header present once `new_checked` succeeds).
#[derive(Debug, Clone)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Ipv6Packet { buffer };
        if p.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if p.version() != 6 {
            return Err(Error::Malformed("IPv6 version is not 6"));
        }
        Ok(p)
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }

    pub fn traffic_class(&self) -> u8 {
        let b = self.buffer.as_ref();
        (b[0] << 4) | (b[1] >> 4)
    }

    pub fn flow_label(&self) -> u32 {
        let b = self.buffer.as_ref();
        (u32::from(b[1] & 0x0f) << 16) | u32::from(be16(b, 2))
    }

    /// Payload length field: everything after the fixed header (extension headers included).
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }

    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[6]
    }

    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[7]
    }

    pub fn src_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[8..24]);
        Ipv6Addr::from(a)
    }

    pub fn dst_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[24..40]);
        Ipv6Addr::from(a)
    }

    /// Follows the extension-header chain (hop-by-hop, routing, destination options, fragment,
    /// AH) and returns the upper-layer protocol, the offset of its header in the buffer and its
    /// length as the headers state it. A non-first fragment yields `Malformed` (no reassembly).
    pub fn upper_layer(&self) -> Result<(u8, usize, usize)> {
        let b = self.buffer.as_ref();
        let stated_end = HEADER_LEN + usize::from(self.payload_len());
        let mut nh = self.next_header();
        let mut at = HEADER_LEN;
        // RFC 8200 §4.1 bounds the chain in practice; cap the walk so a crafted packet cannot loop.
        for _ in 0..16 {
            match nh {
                ip_proto::HOPOPT | ip_proto::IPV6_ROUTE | ip_proto::IPV6_OPTS => {
                    if b.len() < at + 2 {
                        return Err(Error::Truncated);
                    }
                    nh = b[at];
                    at += (usize::from(b[at + 1]) + 1) * 8;
                }
                ip_proto::AH => {
                    // RFC 4302 §2.2: length in 4-octet units, minus 2.
                    if b.len() < at + 2 {
                        return Err(Error::Truncated);
                    }
                    nh = b[at];
                    at += (usize::from(b[at + 1]) + 2) * 4;
                }
                ip_proto::IPV6_FRAG => {
                    if b.len() < at + 8 {
                        return Err(Error::Truncated);
                    }
                    let off = be16(b, at + 2) >> 3;
                    let more = be16(b, at + 2) & 1 != 0;
                    if off != 0 || more {
                        return Err(FRAGMENT);
                    }
                    nh = b[at];
                    at += 8;
                }
                ip_proto::IPV6_NONXT => return Ok((nh, at, 0)),
                _ => {
                    if at > stated_end {
                        return Err(Error::Malformed(
                            "IPv6 extension headers exceed payload length",
                        ));
                    }
                    return Ok((nh, at, stated_end - at));
                }
            }
        }
        Err(Error::Malformed("IPv6 extension header chain too long"))
    }
}

/// The parsed form of an IPv6 fixed header (emit writes no extension headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub src_addr: Ipv6Addr,
    pub dst_addr: Ipv6Addr,
    pub next_header: u8,
    pub payload_len: usize,
    pub hop_limit: u8,
    pub traffic_class: u8,
}

impl Ipv6Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Result<Ipv6Repr> {
        Ok(Ipv6Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            payload_len: usize::from(p.payload_len()),
            hop_limit: p.hop_limit(),
            traffic_class: p.traffic_class(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv6Packet<T>) {
        let b = p.buffer.as_mut();
        b[0] = 0x60 | (self.traffic_class >> 4);
        b[1] = self.traffic_class << 4;
        b[2] = 0;
        b[3] = 0;
        put16(b, 4, self.payload_len as u16);
        b[6] = self.next_header;
        b[7] = self.hop_limit;
        b[8..24].copy_from_slice(&self.src_addr.octets());
        b[24..40].copy_from_slice(&self.dst_addr.octets());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv6Repr {
        Ipv6Repr {
            src_addr: "2001:db8::1".parse().unwrap(),
            dst_addr: "2001:db8::2".parse().unwrap(),
            next_header: ip_proto::TCP,
            payload_len: 20,
            hop_limit: 64,
            traffic_class: 0xb8,
        }
    }

    #[test]
    fn test_ipv6_emit_then_parse_roundtrip() {
        let mut buf = [0u8; 60];
        repr().emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
        let p = Ipv6Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(Ipv6Repr::parse(&p).unwrap(), repr());
        assert_eq!(p.upper_layer().unwrap(), (ip_proto::TCP, 40, 20));
        assert_eq!(p.flow_label(), 0);
    }

    #[test]
    fn test_ipv6_extension_headers_walked() {
        let mut r = repr();
        r.next_header = ip_proto::HOPOPT;
        r.payload_len = 8 + 8 + 20;
        let mut buf = [0u8; 40 + 36];
        r.emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
        buf[40] = ip_proto::IPV6_FRAG; // hop-by-hop: next = fragment, len 0 → 8 bytes
        buf[48] = ip_proto::TCP; // fragment header, offset 0, M=0 (atomic fragment)
        let p = Ipv6Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.upper_layer().unwrap(), (ip_proto::TCP, 56, 20));
        // A real fragment is refused.
        buf[51] = 1;
        let p = Ipv6Packet::new_checked(&buf[..]).unwrap();
        assert!(matches!(p.upper_layer(), Err(Error::Malformed(_))));
    }

    #[test]
    fn test_ipv6_truncated_chain_is_error_not_panic() {
        let mut r = repr();
        r.next_header = ip_proto::IPV6_OPTS;
        let mut buf = [0u8; 41];
        r.emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(
            Ipv6Packet::new_checked(&buf[..]).unwrap().upper_layer(),
            Err(Error::Truncated)
        );
        assert_eq!(
            Ipv6Packet::new_checked(&buf[..39]).err(),
            Some(Error::Truncated)
        );
    }
}
