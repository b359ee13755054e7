//! Capture writers. Output depends only on the arguments (no clock, no host data), so the same
//! packets give byte-identical files.

use super::linktype;
use std::io::{self, Write};

/// Default snapshot length (what tcpdump uses since 4.0 for "whole packet").
pub const DEFAULT_SNAPLEN: u32 = 262_144;

/// Writes classic pcap, nanosecond variant (magic 0xa1b23c4d, little-endian, version 2.4).
/// Wireshark/tshark, tcpdump and tcptrace (through libpcap ≥ 1.5) read it.
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// A writer for Ethernet frames, whole packets kept. Writes the 24-byte file header.
    pub fn new(w: W) -> io::Result<Self> {
        Self::with_options(w, linktype::ETHERNET, DEFAULT_SNAPLEN)
    }

    /// A writer for any link type; packets longer than `snaplen` are cut to it (their original
    /// length is still recorded), as `tcpdump -s` does.
    pub fn with_options(mut w: W, linktype: u32, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.max(1);
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone = 0, sigfigs = 0
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&linktype.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, snaplen })
    }

    /// Writes one packet captured at `ts_ns` nanoseconds (since the epoch, or since the start of
    /// a simulation: any origin the reader should show).
    pub fn write_packet(&mut self, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        self.write_packet_with_orig_len(ts_ns, frame, frame.len() as u32)
    }

    /// Writes a packet whose first bytes are `data` and whose length on the wire was `orig_len`
    /// (for callers that build only the headers of long packets).
    pub fn write_packet_with_orig_len(
        &mut self,
        ts_ns: u64,
        data: &[u8],
        orig_len: u32,
    ) -> io::Result<()> {
        let incl = (data.len() as u32).min(self.snaplen);
        let mut h = [0u8; 16];
        // Seconds beyond u32 (year 2106) cannot be represented: saturate rather than wrap.
        let sec = (ts_ns / 1_000_000_000).min(u64::from(u32::MAX)) as u32;
        let ns = (ts_ns % 1_000_000_000) as u32;
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&ns.to_le_bytes());
        h[8..12].copy_from_slice(&incl.to_le_bytes());
        h[12..16].copy_from_slice(&orig_len.max(incl).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&data[..incl as usize])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Writes pcapng (little-endian): one Section Header Block, Interface Description Blocks added
/// with [`PcapngWriter::add_interface`], Enhanced Packet Blocks. Timestamps in nanoseconds
/// (`if_tsresol` = 9) unless the interface is given another decimal resolution.
pub struct PcapngWriter<W: Write> {
    w: W,
    ifaces: Vec<(u32, u8)>, // (snaplen, tsresol exponent)
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the Section Header Block (section length unspecified, -1).
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut b = Vec::with_capacity(28);
        b.extend_from_slice(&0x0a0d_0d0au32.to_le_bytes());
        b.extend_from_slice(&28u32.to_le_bytes());
        b.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
        b.extend_from_slice(&28u32.to_le_bytes());
        w.write_all(&b)?;
        Ok(PcapngWriter {
            w,
            ifaces: Vec::new(),
        })
    }

    /// Adds an interface; returns its id. `tsresol_exp` is the decimal exponent of the timestamp
    /// unit (6 = µs, 9 = ns); `snaplen` 0 means no limit.
    pub fn add_interface(
        &mut self,
        linktype: u32,
        snaplen: u32,
        tsresol_exp: u8,
    ) -> io::Result<u32> {
        let mut b = Vec::with_capacity(32);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&32u32.to_le_bytes());
        b.extend_from_slice(&(linktype as u16).to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&snaplen.to_le_bytes());
        // if_tsresol option (code 9, length 1, padded), then opt_endofopt.
        b.extend_from_slice(&9u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&[tsresol_exp & 0x7f, 0, 0, 0]);
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&32u32.to_le_bytes());
        self.w.write_all(&b)?;
        // pcapng §4.2: snaplen 0 means no limit.
        let limit = if snaplen == 0 { u32::MAX } else { snaplen };
        self.ifaces.push((limit, tsresol_exp & 0x7f));
        Ok(self.ifaces.len() as u32 - 1)
    }

    /// Writes an Enhanced Packet Block on interface `iface`.
    pub fn write_packet(&mut self, iface: u32, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        let (snaplen, exp) = *self.ifaces.get(iface as usize).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("no interface {iface}"))
        })?;
        let incl = (frame.len() as u32).min(snaplen);
        let ts: u64 = if exp >= 9 {
            ts_ns.saturating_mul(10u64.saturating_pow(u32::from(exp - 9)))
        } else {
            ts_ns / 10u64.pow(u32::from(9 - exp))
        };
        let padded = (incl as usize).div_ceil(4) * 4;
        let total = (32 + padded) as u32;
        let mut h = [0u8; 28];
        h[0..4].copy_from_slice(&6u32.to_le_bytes());
        h[4..8].copy_from_slice(&total.to_le_bytes());
        h[8..12].copy_from_slice(&iface.to_le_bytes());
        h[12..16].copy_from_slice(&((ts >> 32) as u32).to_le_bytes());
        h[16..20].copy_from_slice(&(ts as u32).to_le_bytes());
        h[20..24].copy_from_slice(&incl.to_le_bytes());
        h[24..28].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&frame[..incl as usize])?;
        self.w.write_all(&[0u8; 3][..padded - incl as usize])?;
        self.w.write_all(&total.to_le_bytes())
    }

    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::super::CaptureReader;
    use super::*;

    #[test]
    fn test_pcap_writer_header_bytes() {
        let w = PcapWriter::new(Vec::new()).unwrap().into_inner().unwrap();
        assert_eq!(
            w,
            [0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0]
        );
    }

    #[test]
    fn test_pcap_writer_roundtrip_with_snaplen() {
        let mut w = PcapWriter::with_options(Vec::new(), linktype::RAW, 10).unwrap();
        w.write_packet(1_000_000_123, &[7u8; 30]).unwrap();
        w.write_packet(2_500_000_000, &[1, 2, 3]).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut r = CaptureReader::new(&bytes[..]).unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(
            (a.ts_ns, a.orig_len, a.data.len(), a.linktype),
            (1_000_000_123, 30, 10, 101)
        );
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.ts_ns, b.data), (2_500_000_000, &[1u8, 2, 3][..]));
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn test_pcapng_writer_two_interfaces_roundtrip() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let i0 = w.add_interface(linktype::ETHERNET, 65535, 9).unwrap();
        let i1 = w.add_interface(linktype::RAW, 65535, 6).unwrap();
        w.write_packet(i1, 3_000_001_999, &[0x45; 5]).unwrap();
        w.write_packet(i0, 42, &[1u8; 64]).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut r = CaptureReader::new(&bytes[..]).unwrap();
        let a = r.next_record().unwrap().unwrap();
        // Microsecond interface: the sub-microsecond part is lost.
        assert_eq!(
            (a.interface, a.linktype, a.ts_ns, a.data.len()),
            (1, 101, 3_000_001_000, 5)
        );
        let b = r.next_record().unwrap().unwrap();
        assert_eq!(
            (b.interface, b.linktype, b.ts_ns, b.data.len()),
            (0, 1, 42, 64)
        );
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn test_pcapng_writer_unknown_interface_is_error() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        assert!(w.write_packet(0, 0, &[1]).is_err());
    }
}
