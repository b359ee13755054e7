//! Wire formats, in smoltcp's style (docs/../shared/reference/style.md): for each header a
//! zero-copy view `Xxx<T: AsRef<[u8]>>` over a byte buffer with field accessors (and setters when
//! `T: AsMut<[u8]>`), and a `XxxRepr` holding the parsed fields with `parse` and `emit`.
//! Reading a capture and writing one share these types, so what we emit is what we parse.
//!
//! Views never panic on short buffers once `new_checked` succeeded; `new_unchecked` views are
//! only built by this crate over buffers whose length it has checked.
//!
//! These are hand-written rather than etherparse's: see [`crate::decode`] for what etherparse
//! lacks (SLL2, BSD loopback, TCP options after an unknown one) and the measured speed.

pub mod checksum;
pub mod ethernet;
pub mod ipv4;
pub mod ipv6;
pub mod sll;
pub mod tcp;
pub mod udp;

pub use ethernet::{EtherType, EthernetAddress, EthernetFrame, EthernetRepr};
pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use ipv6::{Ipv6Packet, Ipv6Repr};
pub use sll::{Sll2Header, SllHeader};
pub use tcp::{TcpFlags, TcpOption, TcpOptions, TcpPacket, TcpRepr};
pub use udp::{UdpPacket, UdpRepr};

/// IP protocol numbers (IANA "Assigned Internet Protocol Numbers").
pub mod ip_proto {
    pub const HOPOPT: u8 = 0;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const IPV6_ROUTE: u8 = 43;
    pub const IPV6_FRAG: u8 = 44;
    pub const AH: u8 = 51;
    pub const IPV6_NONXT: u8 = 59;
    pub const IPV6_OPTS: u8 = 60;
}

/// Why a buffer could not be parsed as a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer ends before the header (or a length field inside it) says it should.
    Truncated,
    /// A field has a value the format does not allow; the text names the field.
    Malformed(&'static str),
    /// The checksum does not verify.
    Checksum,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Truncated => write!(f, "truncated header"),
            Error::Malformed(what) => write!(f, "malformed header: {what}"),
            Error::Checksum => write!(f, "bad checksum"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
