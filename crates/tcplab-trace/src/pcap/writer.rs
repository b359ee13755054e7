//! Capture writers: our API (timestamps in nanoseconds as `u64`, packets cut to the snap
//! length as `tcpdump -s` does, seconds beyond 2106 saturated) over the [`pcap_file`] crate's
//! `PcapWriter` and `PcapNgWriter`, which write the file header, record headers and blocks.
//!
//! The simulator's capture path (crates/tcplab-py/src/capture.rs) calls
//! [`PcapWriter::write_packet`] once per packet, so it must not allocate. pcap-file 3.0.0-rc.3
//! does not: a `PcapPacket` borrows the frame and its header is written field by field, and an
//! `EnhancedPacketBlock` with no options borrows the frame too (its first use builds one lazy
//! table of resolutions, once per process). The test `tests/alloc.rs` counts allocations over
//! many packets with a warm buffer and fails on any. The frames themselves are built by
//! [`super::emit`] into a caller-owned buffer; pcap-file has no frame builder.
//!
//! Output depends only on the arguments (no clock, no host data), so the same packets give
//! byte-identical files, the same bytes as the hand-written writers these replaced (the
//! golden test below).

use super::linktype;
use pcap_file::pcap::{
    PcapHeader, PcapPacket, PcapTsResolution, PcapWriteError, PcapWriter as FilePcapWriter,
};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption, InterfaceTsResolution,
};
use pcap_file::pcapng::{PcapNgWriteError, PcapNgWriter};
use pcap_file::{DataLink, Endianness};
use std::borrow::Cow;
use std::io::{self, Write};
use std::time::Duration;

/// Default snapshot length (what tcpdump uses since 4.0 for "whole packet").
pub const DEFAULT_SNAPLEN: u32 = 262_144;

fn pcap_io(e: PcapWriteError) -> io::Error {
    match e {
        PcapWriteError::Io(e) | PcapWriteError::FieldWriteFailed(_, e) => e,
        PcapWriteError::Validation(v) => io::Error::new(io::ErrorKind::InvalidInput, v.to_string()),
    }
}

fn pcapng_io(e: PcapNgWriteError) -> io::Error {
    match e {
        PcapNgWriteError::Io(e) => e,
        other => {
            let mut msg = other.to_string();
            let mut src = std::error::Error::source(&other);
            while let Some(x) = src {
                msg.push_str(": ");
                msg.push_str(&x.to_string());
                src = x.source();
            }
            io::Error::new(io::ErrorKind::InvalidInput, msg)
        }
    }
}

/// Writes classic pcap, nanosecond variant (magic 0xa1b23c4d, little-endian, version 2.4).
/// Wireshark/tshark, tcpdump and tcptrace (through libpcap ≥ 1.5) read it.
pub struct PcapWriter<W: Write> {
    w: FilePcapWriter<W>,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// A writer for Ethernet frames, whole packets kept. Writes the 24-byte file header.
    pub fn new(w: W) -> io::Result<Self> {
        Self::with_options(w, linktype::ETHERNET, DEFAULT_SNAPLEN)
    }

    /// A writer for any link type; packets longer than `snaplen` are cut to it (their original
    /// length is still recorded), as `tcpdump -s` does.
    pub fn with_options(w: W, linktype: u32, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.max(1);
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::from(linktype),
            ts_resolution: PcapTsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let w = FilePcapWriter::with_header(w, header).map_err(pcap_io)?;
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
        // Seconds beyond u32 (year 2106) cannot be represented: saturate rather than wrap.
        let sec = (ts_ns / 1_000_000_000).min(u64::from(u32::MAX));
        let ns = (ts_ns % 1_000_000_000) as u32;
        let p = PcapPacket::new(
            Duration::new(sec, ns),
            orig_len.max(incl),
            &data[..incl as usize],
        )
        .map_err(|v| io::Error::new(io::ErrorKind::InvalidInput, v.to_string()))?;
        self.w.write_packet(&p).map_err(pcap_io)?;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush().map_err(pcap_io)
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.w.into_inner())
    }
}

/// Writes pcapng (little-endian): one Section Header Block, Interface Description Blocks added
/// with [`PcapngWriter::add_interface`], Enhanced Packet Blocks. Timestamps in nanoseconds
/// (`if_tsresol` = 9) unless the interface is given another decimal resolution.
pub struct PcapngWriter<W: Write> {
    w: PcapNgWriter<W>,
    /// Snap length of each interface (`u32::MAX` for none).
    snaplens: Vec<u32>,
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the Section Header Block (version 1.0, section length unspecified, -1).
    pub fn new(w: W) -> io::Result<Self> {
        let w = PcapNgWriter::with_endianness(w, Endianness::Little).map_err(pcapng_io)?;
        Ok(PcapngWriter {
            w,
            snaplens: Vec::new(),
        })
    }

    /// Adds an interface; returns its id. `tsresol_exp` is the decimal exponent of the timestamp
    /// unit (6 = µs, 9 = ns; at most 9); `snaplen` 0 means no limit.
    pub fn add_interface(
        &mut self,
        linktype: u32,
        snaplen: u32,
        tsresol_exp: u8,
    ) -> io::Result<u32> {
        let resol = InterfaceTsResolution::new(false, tsresol_exp)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::from(linktype),
            snaplen,
            options: vec![InterfaceDescriptionOption::IfTsResol(resol)],
        };
        self.w.write_pcapng_block(idb).map_err(pcapng_io)?;
        // pcapng §4.2: snaplen 0 means no limit.
        self.snaplens
            .push(if snaplen == 0 { u32::MAX } else { snaplen });
        Ok(self.snaplens.len() as u32 - 1)
    }

    /// Writes an Enhanced Packet Block on interface `iface`.
    pub fn write_packet(&mut self, iface: u32, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        let snaplen = *self.snaplens.get(iface as usize).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("no interface {iface}"))
        })?;
        let incl = (frame.len() as u32).min(snaplen);
        let epb = EnhancedPacketBlock {
            interface_id: iface,
            timestamp: Duration::from_nanos(ts_ns),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(&frame[..incl as usize]),
            options: Vec::new(),
        };
        self.w.write_pcapng_block(epb).map_err(pcapng_io)?;
        Ok(())
    }

    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.get_mut().flush()?;
        Ok(self.w.into_inner())
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

    /// See [`test_writers_golden_bytes`].
    const GOLDEN_PCAP: &str = "4d3cb2a10200040000000000000000001400000014010000010000007b000000140000001e0000000707070707070707070707070707070707070707ffffffffffe54a2a03000000dc050000010203";
    const GOLDEN_PCAPNG: &str = "0a0d0d0a1c0000004d3c2b1a01000000ffffffffffffffff1c0000000100000020000000010000000000000009000100090000000000000020000000010000002000000071000000100000000900010006000000000000002000000006000000600000000000000000000000050000003d0000003d000000010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010000006000000006000000300000000100000000000000581b000010000000280000000202020202020202020202020202020230000000";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// The bytes the hand-written writers (before pcap-file) gave for the same calls: switching
    /// the library must not change a capture.
    #[test]
    fn test_writers_golden_bytes() {
        let mut w = PcapWriter::with_options(Vec::new(), linktype::LINUX_SLL2, 20).unwrap();
        w.write_packet(1_000_000_123, &[7u8; 30]).unwrap();
        w.write_packet_with_orig_len(u64::MAX, &[1, 2, 3], 1500)
            .unwrap();
        assert_eq!(hex(&w.into_inner().unwrap()), GOLDEN_PCAP);
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let a = w.add_interface(linktype::ETHERNET, 0, 9).unwrap();
        let b = w.add_interface(linktype::LINUX_SLL, 16, 6).unwrap();
        w.write_packet(a, 5, &[1u8; 61]).unwrap();
        w.write_packet(b, 7_000_999, &[2u8; 40]).unwrap();
        assert_eq!(hex(&w.into_inner().unwrap()), GOLDEN_PCAPNG);
    }

    #[test]
    fn test_pcap_writer_link_types_kept() {
        for lt in [0, 1, 12, 14, 101, 108, 113, 228, 229, 276, 147] {
            let w = PcapWriter::with_options(Vec::new(), lt, 96).unwrap();
            let b = w.into_inner().unwrap();
            assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), lt);
            let mut ng = PcapngWriter::new(Vec::new()).unwrap();
            ng.add_interface(lt, 0, 9).unwrap();
            let b = ng.into_inner().unwrap();
            assert_eq!(u32::from(u16::from_le_bytes([b[36], b[37]])), lt);
        }
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
