//! TCP headers (RFC 9293 §3.1) and options: End of Option List, No-Operation and MSS
//! (RFC 9293 §3.2), Window Scale and Timestamps (RFC 7323 §2.2, §3.2), SACK-Permitted and SACK
//! (RFC 2018 §2, §3).

use super::checksum;
use super::{be16, be32, put16, put32, Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const MIN_HEADER_LEN: usize = 20;
pub const MAX_HEADER_LEN: usize = 60;
/// Most SACK blocks one option can carry (RFC 2018 §3: 40 bytes of option space).
pub const MAX_SACK_BLOCKS: usize = 4;

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const FLAGS: usize = 12;
    pub const WINDOW: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
}

/// Option kinds (IANA "TCP Option Kind Numbers").
pub mod kind {
    pub const EOL: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMP: u8 = 8;
}

/// The nine flag bits of the header (RFC 9293 §3.1; AE, formerly NS, in bit 8; CWR/ECE per
/// RFC 3168 §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    pub const AE: u16 = 0x100;

    pub fn fin(self) -> bool {
        self.0 & Self::FIN != 0
    }
    pub fn syn(self) -> bool {
        self.0 & Self::SYN != 0
    }
    pub fn rst(self) -> bool {
        self.0 & Self::RST != 0
    }
    pub fn psh(self) -> bool {
        self.0 & Self::PSH != 0
    }
    pub fn ack(self) -> bool {
        self.0 & Self::ACK != 0
    }
    pub fn urg(self) -> bool {
        self.0 & Self::URG != 0
    }
    pub fn ece(self) -> bool {
        self.0 & Self::ECE != 0
    }
    pub fn cwr(self) -> bool {
        self.0 & Self::CWR != 0
    }
}

impl std::fmt::Display for TcpFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [(u16, &str); 9] = [
            (TcpFlags::SYN, "S"),
            (TcpFlags::FIN, "F"),
            (TcpFlags::RST, "R"),
            (TcpFlags::PSH, "P"),
            (TcpFlags::ACK, "."),
            (TcpFlags::URG, "U"),
            (TcpFlags::ECE, "E"),
            (TcpFlags::CWR, "W"),
            (TcpFlags::AE, "A"),
        ];
        for (bit, name) in NAMES {
            if self.0 & bit != 0 {
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// One option as found in a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    EndOfList,
    NoOperation,
    Mss(u16),
    WindowScale(u8),
    SackPermitted,
    /// SACK blocks (left edge, right edge); `count` of them are valid.
    Sack {
        blocks: [(u32, u32); MAX_SACK_BLOCKS],
        count: u8,
    },
    Timestamp {
        tsval: u32,
        tsecr: u32,
    },
    Unknown {
        kind: u8,
        data: &'a [u8],
    },
}

/// Iterator over the options area; stops after End of Option List. A malformed option (length
/// below 2, beyond the area, or wrong for its kind) yields one `Err` and ends the iteration.
#[derive(Debug, Clone)]
pub struct TcpOptionIter<'a> {
    data: &'a [u8],
    done: bool,
}

impl<'a> TcpOptionIter<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        TcpOptionIter { data, done: false }
    }
}

impl<'a> Iterator for TcpOptionIter<'a> {
    type Item = Result<TcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.data.is_empty() {
            return None;
        }
        let k = self.data[0];
        match k {
            kind::EOL => {
                self.done = true;
                return Some(Ok(TcpOption::EndOfList));
            }
            kind::NOP => {
                self.data = &self.data[1..];
                return Some(Ok(TcpOption::NoOperation));
            }
            _ => {}
        }
        self.done = true; // set back below when the option is well formed
        if self.data.len() < 2 {
            return Some(Err(Error::Malformed("TCP option without length")));
        }
        let len = usize::from(self.data[1]);
        if len < 2 {
            return Some(Err(Error::Malformed("TCP option length below 2")));
        }
        if len > self.data.len() {
            return Some(Err(Error::Malformed(
                "TCP option longer than the options area",
            )));
        }
        let body = &self.data[2..len];
        let opt = match (k, len) {
            (kind::MSS, 4) => TcpOption::Mss(be16(body, 0)),
            (kind::WINDOW_SCALE, 3) => TcpOption::WindowScale(body[0]),
            (kind::SACK_PERMITTED, 2) => TcpOption::SackPermitted,
            (kind::TIMESTAMP, 10) => TcpOption::Timestamp {
                tsval: be32(body, 0),
                tsecr: be32(body, 4),
            },
            (kind::SACK, _)
                if (len - 2) % 8 == 0 && (10..=2 + 8 * MAX_SACK_BLOCKS).contains(&len) =>
            {
                let mut blocks = [(0u32, 0u32); MAX_SACK_BLOCKS];
                let n = (len - 2) / 8;
                for (i, b) in blocks.iter_mut().enumerate().take(n) {
                    *b = (be32(body, 8 * i), be32(body, 8 * i + 4));
                }
                TcpOption::Sack {
                    blocks,
                    count: n as u8,
                }
            }
            (
                kind::MSS
                | kind::WINDOW_SCALE
                | kind::SACK_PERMITTED
                | kind::TIMESTAMP
                | kind::SACK,
                _,
            ) => {
                return Some(Err(Error::Malformed(
                    "TCP option length wrong for its kind",
                )));
            }
            _ => TcpOption::Unknown {
                kind: k,
                data: body,
            },
        };
        self.data = &self.data[len..];
        self.done = false;
        Some(Ok(opt))
    }
}

/// The options of one segment, in parsed form (fixed size: no allocation per packet).
/// Equality ignores the unused SACK slots.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamp: Option<(u32, u32)>,
    /// SACK blocks (left, right); the first `sack_count` are valid. Prefer
    /// [`TcpOptions::set_sack_blocks`] and [`TcpOptions::sack_blocks`].
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// An option was malformed; options after it were not read.
    pub malformed: bool,
}

impl PartialEq for TcpOptions {
    fn eq(&self, o: &Self) -> bool {
        self.mss == o.mss
            && self.window_scale == o.window_scale
            && self.sack_permitted == o.sack_permitted
            && self.timestamp == o.timestamp
            && self.sack_blocks() == o.sack_blocks()
            && self.malformed == o.malformed
    }
}

impl Eq for TcpOptions {}

impl TcpOptions {
    /// The SACK blocks (left, right) in the order they appear.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.sack_count).min(MAX_SACK_BLOCKS)]
    }

    /// Sets the SACK blocks; at most [`MAX_SACK_BLOCKS`] are kept.
    pub fn set_sack_blocks(&mut self, blocks: &[(u32, u32)]) {
        let n = blocks.len().min(MAX_SACK_BLOCKS);
        self.sack = [(0, 0); MAX_SACK_BLOCKS];
        self.sack[..n].copy_from_slice(&blocks[..n]);
        self.sack_count = n as u8;
    }

    /// Parses an options area (never fails: a malformed option sets `malformed`).
    pub fn parse(data: &[u8]) -> TcpOptions {
        let mut o = TcpOptions::default();
        for opt in TcpOptionIter::new(data) {
            match opt {
                Ok(TcpOption::Mss(v)) => o.mss = Some(v),
                Ok(TcpOption::WindowScale(v)) => o.window_scale = Some(v),
                Ok(TcpOption::SackPermitted) => o.sack_permitted = true,
                Ok(TcpOption::Timestamp { tsval, tsecr }) => o.timestamp = Some((tsval, tsecr)),
                Ok(TcpOption::Sack { blocks, count }) => {
                    o.sack = blocks;
                    o.sack_count = count;
                }
                Ok(_) => {}
                Err(_) => o.malformed = true,
            }
        }
        o
    }

    /// How many SACK blocks fit after the other options (40 bytes in all, RFC 9293 §3.1).
    fn sack_blocks_that_fit(&self) -> usize {
        let base = self.fixed_len();
        let room = 40usize.saturating_sub(base + 4) / 8;
        usize::from(self.sack_count).min(room)
    }

    /// Bytes of the options other than SACK, in the layout `emit` uses.
    fn fixed_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.timestamp.is_some() || self.sack_permitted {
            n += if self.timestamp.is_some() { 12 } else { 4 };
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        n
    }

    /// Length of the emitted options area (a multiple of 4, at most 40).
    pub fn buffer_len(&self) -> usize {
        let n = self.sack_blocks_that_fit();
        self.fixed_len() + if n > 0 { 4 + 8 * n } else { 0 }
    }

    /// Writes the options area into `b` (which must be `buffer_len()` long), in the order Linux
    /// sends them: MSS; SACK-Permitted with Timestamps (or NOP-padded alone); NOP + Window Scale;
    /// NOP NOP + SACK. Every option is aligned so the area needs no trailing padding. SACK blocks
    /// that do not fit in 40 bytes are dropped from the end (RFC 2018 §3: with timestamps at most
    /// three fit).
    pub fn emit(&self, b: &mut [u8]) {
        let mut at = 0;
        if let Some(mss) = self.mss {
            b[at] = kind::MSS;
            b[at + 1] = 4;
            put16(b, at + 2, mss);
            at += 4;
        }
        match (self.sack_permitted, self.timestamp) {
            (true, Some((tsval, tsecr))) => {
                b[at..at + 4].copy_from_slice(&[kind::SACK_PERMITTED, 2, kind::TIMESTAMP, 10]);
                put32(b, at + 4, tsval);
                put32(b, at + 8, tsecr);
                at += 12;
            }
            (false, Some((tsval, tsecr))) => {
                b[at..at + 4].copy_from_slice(&[kind::NOP, kind::NOP, kind::TIMESTAMP, 10]);
                put32(b, at + 4, tsval);
                put32(b, at + 8, tsecr);
                at += 12;
            }
            (true, None) => {
                b[at..at + 4].copy_from_slice(&[kind::NOP, kind::NOP, kind::SACK_PERMITTED, 2]);
                at += 4;
            }
            (false, None) => {}
        }
        if let Some(ws) = self.window_scale {
            b[at..at + 4].copy_from_slice(&[kind::NOP, kind::WINDOW_SCALE, 3, ws]);
            at += 4;
        }
        let n = self.sack_blocks_that_fit();
        if n > 0 {
            b[at..at + 4].copy_from_slice(&[kind::NOP, kind::NOP, kind::SACK, (2 + 8 * n) as u8]);
            at += 4;
            for &(l, r) in &self.sack[..n] {
                put32(b, at, l);
                put32(b, at + 4, r);
                at += 8;
            }
        }
        debug_assert_eq!(at, b.len());
    }
}

/// A zero-copy view of a TCP segment. `new_checked` guarantees the header and its options are in
/// the buffer; the payload is whatever follows (possibly cut by the capture's snaplen).
#[derive(Debug, Clone)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        TcpPacket { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = TcpPacket { buffer };
        let len = p.buffer.as_ref().len();
        if len < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let hl = p.header_len();
        if hl < MIN_HEADER_LEN {
            return Err(Error::Malformed("TCP data offset below 5"));
        }
        if len < hl {
            return Err(Error::Truncated);
        }
        Ok(p)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT)
    }
    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ)
    }
    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK)
    }
    /// Header length in bytes (data offset × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::FLAGS] >> 4) * 4
    }
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(be16(self.buffer.as_ref(), field::FLAGS) & 0x01ff)
    }
    pub fn window_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WINDOW)
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }
    pub fn urgent_at(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT)
    }
    /// The options area.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[MIN_HEADER_LEN..self.header_len()]
    }
    pub fn option_iter(&self) -> TcpOptionIter<'_> {
        TcpOptionIter::new(self.options())
    }
    /// The captured payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// Verifies the checksum over the whole buffer (header + payload) with the pseudo-header of
    /// `src`/`dst`. Only meaningful when the whole segment was captured.
    pub fn verify_checksum(&self, src: IpAddr, dst: IpAddr) -> bool {
        let b = self.buffer.as_ref();
        let acc = pseudo(src, dst, b.len() as u32);
        checksum::fold(checksum::accumulate(acc, b)) == 0xffff
    }
}

fn pseudo(src: IpAddr, dst: IpAddr, len: u32) -> u64 {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            checksum::pseudo_header_v4(s, d, super::ip_proto::TCP, len)
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            checksum::pseudo_header_v6(s, d, super::ip_proto::TCP, len)
        }
        (IpAddr::V4(s), IpAddr::V6(d)) => {
            checksum::pseudo_header_v6(s.to_ipv6_mapped(), d, super::ip_proto::TCP, len)
        }
        (IpAddr::V6(s), IpAddr::V4(d)) => {
            checksum::pseudo_header_v6(s, d.to_ipv6_mapped(), super::ip_proto::TCP, len)
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    /// Computes the checksum over the buffer (header + payload; it must hold the whole segment)
    /// with the IPv4 pseudo-header and stores it.
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.fill_checksum_with(checksum::pseudo_header_v4(
            src,
            dst,
            super::ip_proto::TCP,
            self.buffer.as_ref().len() as u32,
        ));
    }

    /// As [`Self::fill_checksum_v4`] with the IPv6 pseudo-header.
    pub fn fill_checksum_v6(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.fill_checksum_with(checksum::pseudo_header_v6(
            src,
            dst,
            super::ip_proto::TCP,
            self.buffer.as_ref().len() as u32,
        ));
    }

    fn fill_checksum_with(&mut self, pseudo: u64) {
        let b = self.buffer.as_mut();
        put16(b, field::CHECKSUM, 0);
        let c = !checksum::fold(checksum::accumulate(pseudo, b));
        put16(b, field::CHECKSUM, c);
    }
}

/// The parsed form of a TCP header (the payload is described by its length elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The window field as sent (unscaled).
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
}

impl TcpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &TcpPacket<T>) -> TcpRepr {
        TcpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq: p.seq_number(),
            ack: p.ack_number(),
            flags: p.flags(),
            window: p.window_len(),
            urgent: p.urgent_at(),
            options: TcpOptions::parse(p.options()),
        }
    }

    /// Length of the emitted header including options.
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.buffer_len()
    }

    /// Writes the header and options into the first `header_len()` bytes of the buffer. The
    /// checksum field is left zero: fill it with `fill_checksum_v4`/`_v6` once the payload is in.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut TcpPacket<T>) {
        let hl = self.header_len();
        let b = p.buffer.as_mut();
        put16(b, field::SRC_PORT, self.src_port);
        put16(b, field::DST_PORT, self.dst_port);
        put32(b, field::SEQ, self.seq);
        put32(b, field::ACK, self.ack);
        put16(
            b,
            field::FLAGS,
            ((hl as u16 / 4) << 12) | (self.flags.0 & 0x01ff),
        );
        put16(b, field::WINDOW, self.window);
        put16(b, field::CHECKSUM, 0);
        put16(b, field::URGENT, self.urgent);
        self.options.emit(&mut b[MIN_HEADER_LEN..hl]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syn_repr() -> TcpRepr {
        let mut o = TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            ..Default::default()
        };
        o.timestamp = Some((1000, 0));
        TcpRepr {
            src_port: 40000,
            dst_port: 5001,
            seq: 0xfffffff0,
            ack: 0,
            flags: TcpFlags(TcpFlags::SYN),
            window: 65535,
            urgent: 0,
            options: o,
        }
    }

    fn roundtrip(r: &TcpRepr) -> TcpRepr {
        let mut buf = vec![0u8; r.header_len()];
        r.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
        TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap())
    }

    #[test]
    fn test_tcp_syn_options_roundtrip_in_linux_layout() {
        let r = syn_repr();
        assert_eq!(r.header_len(), 40);
        let mut buf = [0u8; 40];
        r.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
        // MSS, SACK_PERM, TS, NOP, WS as Linux sends them.
        assert_eq!(&buf[20..24], &[2, 4, 0x05, 0xb4]);
        assert_eq!(&buf[24..28], &[4, 2, 8, 10]);
        assert_eq!(&buf[36..40], &[1, 3, 3, 7]);
        assert_eq!(roundtrip(&r), r);
    }

    #[test]
    fn test_tcp_sack_blocks_roundtrip_and_limit_with_timestamps() {
        let mut r = syn_repr();
        r.flags = TcpFlags(TcpFlags::ACK);
        r.options = TcpOptions {
            timestamp: Some((5, 6)),
            ..Default::default()
        };
        r.options
            .set_sack_blocks(&[(10, 20), (30, 40), (50, 60), (70, 80)]);
        // With timestamps only three blocks fit in 40 bytes (RFC 2018 §3).
        assert_eq!(r.header_len(), 20 + 12 + 4 + 24);
        let back = roundtrip(&r);
        assert_eq!(back.options.sack_blocks(), &[(10, 20), (30, 40), (50, 60)]);
        assert_eq!(back.options.timestamp, Some((5, 6)));
        // Without timestamps all four fit.
        r.options.timestamp = None;
        assert_eq!(roundtrip(&r).options.sack_blocks().len(), 4);
    }

    #[test]
    fn test_tcp_checksum_v4_and_v6_verify() {
        let r = syn_repr();
        let mut buf = vec![0u8; r.header_len() + 5];
        buf[r.header_len()..].copy_from_slice(b"hello");
        let (s, d) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut p = TcpPacket::new_unchecked(&mut buf[..]);
        r.emit(&mut p);
        p.fill_checksum_v4(s, d);
        let p = TcpPacket::new_checked(&buf[..]).unwrap();
        assert!(p.verify_checksum(s.into(), d.into()));
        assert!(!p.verify_checksum(d.into(), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3))));
        assert_eq!(p.payload(), b"hello");

        let (s6, d6): (Ipv6Addr, Ipv6Addr) =
            ("fd00::1".parse().unwrap(), "fd00::2".parse().unwrap());
        let mut buf6 = vec![0u8; r.header_len()];
        let mut p6 = TcpPacket::new_unchecked(&mut buf6[..]);
        r.emit(&mut p6);
        p6.fill_checksum_v6(s6, d6);
        assert!(TcpPacket::new_checked(&buf6[..])
            .unwrap()
            .verify_checksum(s6.into(), d6.into()));
    }

    #[test]
    fn test_tcp_malformed_options_flagged_not_fatal() {
        let r = syn_repr();
        let mut buf = vec![0u8; r.header_len()];
        r.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
        buf[21] = 0; // MSS option length 0
        let back = TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap());
        assert!(back.options.malformed);
        assert_eq!(back.options.mss, None);
        buf[21] = 200; // beyond the options area
        assert!(
            TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap())
                .options
                .malformed
        );
        buf[21] = 3; // wrong length for MSS
        assert!(
            TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap())
                .options
                .malformed
        );
    }

    #[test]
    fn test_tcp_eol_stops_and_unknown_skipped() {
        let opts = [1u8, 30, 4, 0xaa, 0xbb, 2, 4, 0x02, 0x18, 0, 3, 3, 9];
        let o = TcpOptions::parse(&opts);
        assert_eq!(o.mss, Some(536));
        assert_eq!(o.window_scale, None, "options after EOL are not read");
        assert!(!o.malformed);
        let kinds: Vec<_> = TcpOptionIter::new(&opts).map(|x| x.unwrap()).collect();
        assert_eq!(
            kinds[1],
            TcpOption::Unknown {
                kind: 30,
                data: &[0xaa, 0xbb]
            }
        );
        assert_eq!(kinds.last(), Some(&TcpOption::EndOfList));
    }

    #[test]
    fn test_tcp_header_checks() {
        assert_eq!(
            TcpPacket::new_checked(&[0u8; 19][..]).err(),
            Some(Error::Truncated)
        );
        let mut buf = [0u8; 20];
        buf[12] = 0x40;
        assert!(matches!(
            TcpPacket::new_checked(&buf[..]),
            Err(Error::Malformed(_))
        ));
        buf[12] = 0x60;
        assert_eq!(
            TcpPacket::new_checked(&buf[..]).err(),
            Some(Error::Truncated)
        );
    }

    #[test]
    fn test_tcp_flags_display() {
        assert_eq!(TcpFlags(TcpFlags::SYN | TcpFlags::ACK).to_string(), "S.");
        assert!(TcpFlags(TcpFlags::FIN | TcpFlags::PSH).fin());
    }
}
