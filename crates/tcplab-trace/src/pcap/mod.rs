//! Capture files: a streaming reader for pcap and pcapng, writers for both, and the frame
//! builders the simulator calls per packet when a capture is asked for.
//!
//! The containers are read and written with the `pcap-file` crate (3.0.0-rc.3): the reader
//! (reader.rs) feeds its sans-I/O parsers from our buffer so errors keep their byte offsets; the
//! writers (writer.rs) wrap its writers, which allocate nothing per packet. Frames (link header,
//! IP, TCP/UDP) are built by emit.rs with our wire types (`crate::wire`); `crate::decode` says why
//! those are not etherparse's.
//!
//! Formats: pcap per draft-ietf-opsawg-pcap (file header §4, packet record §5; magic 0xa1b2c3d4
//! for microseconds, 0xa1b23c4d for nanoseconds, either byte order) and pcapng per
//! draft-ietf-opsawg-pcapng (SHB §4.1, IDB §4.2, EPB §4.3, SPB §4.4, the obsolete Packet Block
//! Appendix A; `if_tsresol` and `if_tsoffset` §4.2). Link types per the tcpdump.org
//! "LINK-LAYER HEADER TYPES" registry.

mod emit;
mod reader;
mod writer;

pub use emit::{
    emit_tcp_frame, emit_tcp_ipv4, emit_udp_ipv4, LinkKind, TcpFrame, TcpPacketRepr, UdpPacketRepr,
};
pub use reader::{CaptureReader, CaptureRecord, Format};
pub use writer::{PcapWriter, PcapngWriter};

/// LINKTYPE_* values (tcpdump.org registry).
pub mod linktype {
    /// BSD loopback: 4-byte address family in the capturing host's byte order.
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// DLT_RAW as some systems number it in files (raw IPv4/IPv6).
    pub const RAW_12: u32 = 12;
    pub const RAW_14: u32 = 14;
    pub const RAW: u32 = 101;
    /// OpenBSD loopback: 4-byte address family in network byte order.
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;

    /// A short name for messages.
    pub fn name(lt: u32) -> &'static str {
        match lt {
            NULL => "NULL",
            ETHERNET => "ETHERNET",
            RAW | RAW_12 | RAW_14 => "RAW",
            LOOP => "LOOP",
            LINUX_SLL => "LINUX_SLL",
            IPV4 => "IPV4",
            IPV6 => "IPV6",
            LINUX_SLL2 => "LINUX_SLL2",
            _ => "unsupported",
        }
    }
}

/// The largest record or block we accept. Real captures stay far below (Wireshark caps packets
/// at 256 KiB for most link types); a larger length means a corrupt file, and refusing it keeps a
/// corrupt length field from making us allocate gigabytes.
pub const MAX_RECORD_LEN: u32 = 64 * 1024 * 1024;

/// What went wrong while reading a capture, and where.
#[derive(Debug)]
pub struct CaptureError {
    /// Byte offset in the file of the header, record or block that could not be read.
    pub offset: u64,
    pub kind: CaptureErrorKind,
}

#[derive(Debug)]
pub enum CaptureErrorKind {
    Io(std::io::Error),
    Empty,
    BadMagic(u32),
    /// The file ends inside a structure: `what` needed `needed` bytes and only `available`
    /// were left.
    Truncated {
        what: &'static str,
        needed: u64,
        available: u64,
    },
    Corrupt(String),
    Unsupported(String),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte offset {}: ", self.offset)?;
        match &self.kind {
            CaptureErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            CaptureErrorKind::Empty => write!(f, "file is empty: not a pcap or pcapng capture"),
            CaptureErrorKind::BadMagic(m) => {
                write!(
                    f,
                    "unrecognized magic number 0x{m:08x}: not a pcap or pcapng capture"
                )
            }
            CaptureErrorKind::Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "truncated {what}: it needs {needed} bytes but only {available} remain in the file"
            ),
            CaptureErrorKind::Corrupt(s) => write!(f, "corrupt capture: {s}"),
            CaptureErrorKind::Unsupported(s) => write!(f, "unsupported: {s}"),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CaptureErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
