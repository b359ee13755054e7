//! Linux "cooked" capture headers, what `tcpdump -i any` writes.
//!
//! * SLL (LINKTYPE_LINUX_SLL = 113), 16 bytes: packet type (2), ARPHRD type (2), address length
//!   (2), address (8, zero padded), protocol type (2, an EtherType for IP).
//! * SLL2 (LINKTYPE_LINUX_SLL2 = 276), 20 bytes: protocol type (2), reserved (2), interface index
//!   (4), ARPHRD type (2), packet type (1), address length (1), address (8).
//!
//! Source: tcpdump.org, "LINKTYPE_LINUX_SLL" and "LINKTYPE_LINUX_SLL2" pages.

use super::{be16, be32, put16, put32, Error, EtherType, Result};

pub const SLL_HEADER_LEN: usize = 16;
pub const SLL2_HEADER_LEN: usize = 20;

/// Packet type values ("sent by us" is what a sender-side capture shows).
pub mod packet_type {
    pub const HOST: u16 = 0;
    pub const BROADCAST: u16 = 1;
    pub const MULTICAST: u16 = 2;
    pub const OTHERHOST: u16 = 3;
    pub const OUTGOING: u16 = 4;
}

/// Zero-copy view of an SLL (v1) header.
#[derive(Debug, Clone)]
pub struct SllHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SllHeader<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        SllHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < SLL_HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(SllHeader { buffer })
    }

    pub fn packet_type(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    pub fn arphrd_type(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    pub fn addr_len(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }

    /// The link-layer address bytes actually used (at most 8).
    pub fn addr(&self) -> &[u8] {
        let n = usize::from(self.addr_len()).min(8);
        &self.buffer.as_ref()[6..6 + n]
    }

    pub fn protocol(&self) -> EtherType {
        EtherType(be16(self.buffer.as_ref(), 14))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SllHeader<T> {
    /// Writes a complete SLL header: packet type, ARPHRD_ETHER (1), the 6-byte address, protocol.
    pub fn emit(&mut self, packet_type: u16, addr: [u8; 6], protocol: EtherType) {
        let b = self.buffer.as_mut();
        put16(b, 0, packet_type);
        put16(b, 2, 1);
        put16(b, 4, 6);
        b[6..12].copy_from_slice(&addr);
        b[12..14].fill(0);
        put16(b, 14, protocol.0);
    }
}

/// Zero-copy view of an SLL2 header.
#[derive(Debug, Clone)]
pub struct Sll2Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Sll2Header<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Sll2Header { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < SLL2_HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Sll2Header { buffer })
    }

    pub fn protocol(&self) -> EtherType {
        EtherType(be16(self.buffer.as_ref(), 0))
    }

    pub fn interface_index(&self) -> u32 {
        be32(self.buffer.as_ref(), 4)
    }

    pub fn arphrd_type(&self) -> u16 {
        be16(self.buffer.as_ref(), 8)
    }

    pub fn packet_type(&self) -> u8 {
        self.buffer.as_ref()[10]
    }

    pub fn addr_len(&self) -> u8 {
        self.buffer.as_ref()[11]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Sll2Header<T> {
    /// Writes a complete SLL2 header for an Ethernet interface.
    pub fn emit(&mut self, protocol: EtherType, ifindex: u32, packet_type: u8, addr: [u8; 6]) {
        let b = self.buffer.as_mut();
        put16(b, 0, protocol.0);
        put16(b, 2, 0);
        put32(b, 4, ifindex);
        put16(b, 8, 1);
        b[10] = packet_type;
        b[11] = 6;
        b[12..18].copy_from_slice(&addr);
        b[18..20].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_sll_emit_then_parse_roundtrip() {
        let mut buf = [0u8; SLL_HEADER_LEN];
        SllHeader::new_unchecked(&mut buf[..]).emit(
            packet_type::OUTGOING,
            [1, 2, 3, 4, 5, 6],
            EtherType::IPV6,
        );
        let h = SllHeader::new_checked(&buf[..]).unwrap();
        assert_eq!(h.packet_type(), packet_type::OUTGOING);
        assert_eq!(h.arphrd_type(), 1);
        assert_eq!(h.addr(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(h.protocol(), EtherType::IPV6);
    }

    #[test]
    fn test_sll2_emit_then_parse_roundtrip() {
        let mut buf = [0u8; SLL2_HEADER_LEN];
        Sll2Header::new_unchecked(&mut buf[..]).emit(EtherType::IPV4, 7, 0, [9; 6]);
        let h = Sll2Header::new_checked(&buf[..]).unwrap();
        assert_eq!(h.protocol(), EtherType::IPV4);
        assert_eq!(h.interface_index(), 7);
        assert_eq!(h.arphrd_type(), 1);
        assert_eq!(h.packet_type(), 0);
        assert_eq!(h.addr_len(), 6);
    }

    #[test]
    fn test_sll_short_buffers_rejected() {
        assert_eq!(
            SllHeader::new_checked(&[0u8; 15][..]).err(),
            Some(Error::Truncated)
        );
        assert_eq!(
            Sll2Header::new_checked(&[0u8; 19][..]).err(),
            Some(Error::Truncated)
        );
    }

    #[test]
    fn test_sll_addr_len_beyond_eight_is_clamped() {
        let mut buf = [0u8; SLL_HEADER_LEN];
        buf[5] = 200;
        assert_eq!(SllHeader::new_checked(&buf[..]).unwrap().addr().len(), 8);
    }
}
