//! IPv4 headers (RFC 791 §3.1). Options are skipped on parse (IHL) and never emitted.

use super::checksum;
use super::{be16, put16, Error, Result};
use std::net::Ipv4Addr;

pub const MIN_HEADER_LEN: usize = 20;

mod field {
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLG_OFF: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
}

/// A zero-copy view of an IPv4 packet. `new_checked` guarantees the whole header (including
/// options) is present; the payload may be shorter than `total_len` says (snaplen-truncated
/// captures), see [`Ipv4Packet::payload`].
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Checks version 4, IHL ≥ 5 and that the header fits in the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Ipv4Packet { buffer };
        let b = p.buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if p.version() != 4 {
            return Err(Error::Malformed("IPv4 version is not 4"));
        }
        let hl = p.header_len();
        if hl < MIN_HEADER_LEN {
            return Err(Error::Malformed("IPv4 IHL below 5"));
        }
        if b.len() < hl {
            return Err(Error::Truncated);
        }
        Ok(p)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    pub fn dscp_ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN]
    }

    /// Total length field (header + payload), as sent.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    pub fn dont_frag(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & 0x4000 != 0
    }

    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & 0x2000 != 0
    }

    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (be16(self.buffer.as_ref(), field::FLG_OFF) & 0x1fff) * 8
    }

    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    pub fn src_addr(&self) -> Ipv4Addr {
        let b = self.buffer.as_ref();
        Ipv4Addr::new(
            b[field::SRC],
            b[field::SRC + 1],
            b[field::SRC + 2],
            b[field::SRC + 3],
        )
    }

    pub fn dst_addr(&self) -> Ipv4Addr {
        let b = self.buffer.as_ref();
        Ipv4Addr::new(
            b[field::DST],
            b[field::DST + 1],
            b[field::DST + 2],
            b[field::DST + 3],
        )
    }

    /// True if the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::checksum(&self.buffer.as_ref()[..self.header_len()]) == 0
    }

    /// Payload length as the header states it (total length − header length). A total length of
    /// zero (seen on captures of TSO-offloaded sends) is reported as `None`.
    pub fn payload_len_field(&self) -> Option<usize> {
        let tl = usize::from(self.total_len());
        if tl == 0 {
            None
        } else {
            tl.checked_sub(self.header_len())
        }
    }

    /// The captured payload: from the end of the header to the end of the packet as stated by
    /// total length, cut at the end of the buffer (snaplen) and ignoring Ethernet padding.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let hl = self.header_len();
        let tl = usize::from(self.total_len());
        let end = if tl == 0 {
            b.len()
        } else {
            tl.max(hl).min(b.len())
        };
        &b[hl..end.max(hl)]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Recomputes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        put16(b, field::CHECKSUM, 0);
        let c = checksum::checksum(&b[..hl]);
        put16(b, field::CHECKSUM, c);
    }
}

/// The parsed form of an IPv4 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub protocol: u8,
    /// Length of the payload (upper-layer header + data).
    pub payload_len: usize,
    pub ttl: u8,
    pub ident: u16,
    /// DSCP (6 bits) and ECN (2 bits).
    pub dscp_ecn: u8,
    pub dont_frag: bool,
}

impl Ipv4Repr {
    /// Parses the header. `verify` also checks the header checksum. Fragments other than a
    /// whole datagram are rejected as malformed for our purposes (no reassembly).
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>, verify: bool) -> Result<Ipv4Repr> {
        if verify && !p.verify_checksum() {
            return Err(Error::Checksum);
        }
        let tl = usize::from(p.total_len());
        let payload_len = if tl == 0 {
            p.buffer.as_ref().len() - p.header_len()
        } else if tl < p.header_len() {
            return Err(Error::Malformed("IPv4 total length below header length"));
        } else {
            tl - p.header_len()
        };
        Ok(Ipv4Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            payload_len,
            ttl: p.ttl(),
            ident: p.ident(),
            dscp_ecn: p.dscp_ecn(),
            dont_frag: p.dont_frag(),
        })
    }

    /// Length of the emitted header (no options).
    pub const fn buffer_len(&self) -> usize {
        MIN_HEADER_LEN
    }

    /// Writes a 20-byte header with a correct checksum. `payload_len + 20` must fit in 16 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) {
        let b = p.buffer.as_mut();
        b[field::VER_IHL] = 0x45;
        b[field::DSCP_ECN] = self.dscp_ecn;
        put16(b, field::LENGTH, (MIN_HEADER_LEN + self.payload_len) as u16);
        put16(b, field::IDENT, self.ident);
        put16(b, field::FLG_OFF, if self.dont_frag { 0x4000 } else { 0 });
        b[field::TTL] = self.ttl;
        b[field::PROTOCOL] = self.protocol;
        b[field::SRC..field::SRC + 4].copy_from_slice(&self.src_addr.octets());
        b[field::DST..field::DST + 4].copy_from_slice(&self.dst_addr.octets());
        p.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 1, 2),
            protocol: 6,
            payload_len: 32,
            ttl: 64,
            ident: 0x1234,
            dscp_ecn: 0x02,
            dont_frag: true,
        }
    }

    #[test]
    fn test_ipv4_emit_then_parse_roundtrip_with_checksum() {
        let mut buf = [0u8; 52];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p, true).unwrap(), repr());
        assert_eq!(p.payload().len(), 32);
    }

    #[test]
    fn test_ipv4_corrupted_checksum_detected() {
        let mut buf = [0u8; 52];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf[8] ^= 1;
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p, true), Err(Error::Checksum));
        assert!(Ipv4Repr::parse(&p, false).is_ok());
    }

    #[test]
    fn test_ipv4_truncated_payload_and_padding() {
        let mut buf = [0u8; 60];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        // Padding beyond total length is not payload.
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..]).unwrap().payload().len(),
            32
        );
        // Snaplen cut: payload is what was captured, repr still has the stated length.
        let p = Ipv4Packet::new_checked(&buf[..30]).unwrap();
        assert_eq!(p.payload().len(), 10);
        assert_eq!(Ipv4Repr::parse(&p, false).unwrap().payload_len, 32);
    }

    #[test]
    fn test_ipv4_bad_version_and_ihl_rejected() {
        let mut buf = [0u8; 40];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf[0] = 0x65;
        assert!(matches!(
            Ipv4Packet::new_checked(&buf[..]),
            Err(Error::Malformed(_))
        ));
        buf[0] = 0x44;
        assert!(matches!(
            Ipv4Packet::new_checked(&buf[..]),
            Err(Error::Malformed(_))
        ));
        buf[0] = 0x4f; // 60-byte header in a 40-byte buffer
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..]).err(),
            Some(Error::Truncated)
        );
    }

    #[test]
    fn test_ipv4_total_len_below_header_is_malformed() {
        let mut buf = [0u8; 40];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf[2..4].copy_from_slice(&10u16.to_be_bytes());
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(matches!(
            Ipv4Repr::parse(&p, false),
            Err(Error::Malformed(_))
        ));
        assert!(p.payload().is_empty());
    }

    #[test]
    fn test_ipv4_fragment_fields() {
        let mut buf = [0u8; 20];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf[6..8].copy_from_slice(&0x2003u16.to_be_bytes());
        let p = Ipv4Packet::new_unchecked(&buf[..]);
        assert!(p.more_frags());
        assert_eq!(p.frag_offset(), 24);
    }
}
