//! Streaming reader for pcap and pcapng over any `Read`: one record in memory at a time.
//!
//! The formats themselves are parsed by the [`pcap_file`] crate (3.0.0-rc.3): pcap file and
//! record headers in either byte order and timestamp resolution ([`PcapParser`]); pcapng block
//! framing, byte order per section, interface link types, `if_tsresol` and `if_tsoffset`
//! ([`PcapNgParser`], its `PcapNgState`). We use the crate's sans-I/O parsers and feed them from
//! our own buffer rather than its `PcapReader`/`PcapNgReader`, for three reasons:
//!
//! * **Byte offsets in errors.** The crate's readers turn a short file into a bare
//!   `UnexpectedEof` (no offset, no size; `PcapReader` does not expose its position at all). Its
//!   parsers report `IncompleteBuffer(needed, got)` on a slice whose file offset we track, so a
//!   truncated file gets an error naming where the cut record or block starts, how many bytes it
//!   needs and how many remain.
//! * **Memory.** The crate's readers allocate a fixed 8 MB buffer and report a block larger than
//!   it as end of file. Our buffer starts at 1 MiB and grows only to the record being read, up to
//!   [`MAX_RECORD_LEN`]; a larger length field is reported as corrupt before anything is
//!   allocated.
//! * **Leniency where analysis needs it.** Blocks the analysis does not use (name resolution,
//!   interface statistics, custom and unknown blocks) are skipped unparsed (`next_raw_block`),
//!   so a malformed option in one of them does not end the read; pcap records are read raw
//!   (`next_raw_packet`) so a record longer than the header's snap length, or a microsecond
//!   fraction ≥ 10^6, is still read, as the hand-written reader this replaced read them (the
//!   crate's validating `next_packet` refuses both).
//!
//! What the crate does not read, and we therefore refuse with a message: Alexey Kuznetzov's
//! "modified" pcap (magic 0xa1b2cd34, some Red Hat Linux 6.x tcpdump builds) and pcapng
//! interfaces with a decimal `if_tsresol` finer than nanoseconds or a binary one finer than
//! 2^-29 s. Also errors now, from the crate's validation of packet blocks: a captured length
//! above the original length, and a timestamp that would fall before 1970 after `if_tsoffset`
//! (the old reader clamped it to 0).

use super::{CaptureError, CaptureErrorKind, MAX_RECORD_LEN};
use pcap_file::pcap::{PcapParseError, PcapParser, PcapTsResolution};
use pcap_file::pcapng::blocks::block_name;
use pcap_file::pcapng::{
    Block, BlockContentParseError, BlockConversionError, ContentValidationError, PcapNgFormatError,
    PcapNgParseError, PcapNgParser, StateUpdateError,
};
use pcap_file::Endianness;
use std::io::{ErrorKind, Read};
use std::time::Duration;

/// pcapng Section Header Block type: the first four bytes of every pcapng file.
const NG_SHB: u32 = 0x0a0d_0d0a;
/// pcap magic numbers, microsecond and nanosecond (draft-ietf-opsawg-pcap §4); which one and
/// the byte order are decided by `pcap-file`. Checked here only to pick the parser, so that a
/// short file that is no capture is called that rather than a truncated pcap header.
const PCAP_MAGICS: [u32; 2] = [0xa1b2_c3d4, 0xa1b2_3c4d];
/// Kuznetzov's modified pcap (not read by `pcap-file`).
const PCAP_MAGIC_KUZNETZOV: u32 = 0xa1b2_cd34;
/// pcap record header length (draft-ietf-opsawg-pcap §5).
const PCAP_RECORD_HDR: usize = 16;
/// pcapng block type + total length + trailing total length (draft-ietf-opsawg-pcapng §3.1).
const NG_MIN_BLOCK: usize = 12;
/// Initial read buffer; grows for records larger than this.
const INITIAL_BUF: usize = 1 << 20;

/// The container format of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap; `nanos` for the nanosecond variant; `big_endian` for the file byte order.
    Pcap {
        nanos: bool,
        big_endian: bool,
    },
    Pcapng,
}

/// One packet from a capture. `data` borrows the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct CaptureRecord<'a> {
    /// Nanoseconds since the Unix epoch (pcapng `if_tsoffset` applied).
    pub ts_ns: u64,
    /// LINKTYPE_* of the interface the packet was captured on.
    pub linktype: u32,
    /// Interface index (0 for pcap).
    pub interface: u32,
    /// Length of the packet on the wire (may exceed `data.len()` if the snaplen cut it).
    pub orig_len: u32,
    /// Captured bytes.
    pub data: &'a [u8],
    /// Byte offset of this record (pcap) or block (pcapng) in the file.
    pub offset: u64,
}

/// A record found in the buffer: everything but the data, which is `buf[data.0..data.1]`.
struct Found {
    ts_ns: u64,
    linktype: u32,
    interface: u32,
    orig_len: u32,
    data: (usize, usize),
    offset: u64,
}

/// What one parse attempt on the buffered bytes gave, owned so the buffer can be refilled.
enum Step {
    /// A packet, `used` bytes long.
    Packet(Found, usize),
    /// A block that carries no packet (pcapng SHB, IDB, NRB, ISB, custom...), `used` bytes long.
    Skip(usize),
    /// The structure at the current position needs `want` bytes; fewer are buffered.
    Need(usize),
}

enum Parser {
    Pcap {
        parser: PcapParser,
        linktype: u32,
        nanos: bool,
    },
    Ng(Box<PcapNgParser>),
}

/// The file's bytes: `buf[pos..len]` are read but not yet parsed; `offset` is the file offset
/// of `buf[pos]`.
struct Input<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    offset: u64,
    eof: bool,
}

/// A streaming capture reader. Call [`CaptureReader::next_record`] until it returns `Ok(None)`.
pub struct CaptureReader<R: Read> {
    input: Input<R>,
    format: Format,
    parser: Parser,
}

fn err(offset: u64, kind: CaptureErrorKind) -> CaptureError {
    CaptureError { offset, kind }
}

fn corrupt(offset: u64, s: String) -> CaptureError {
    err(offset, CaptureErrorKind::Corrupt(s))
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// An error and its sources, joined by ": ".
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

/// Where `part` (a sub-slice of `whole`) starts within `whole`.
fn index_in(whole: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header (pcap) or the first Section Header Block (pcapng).
    pub fn new(src: R) -> Result<Self, CaptureError> {
        let mut input = Input {
            src,
            buf: vec![0; INITIAL_BUF],
            pos: 0,
            len: 0,
            offset: 0,
            eof: false,
        };
        let got = input.fill(4)?;
        if got == 0 {
            return Err(err(0, CaptureErrorKind::Empty));
        }
        if got < 4 {
            return Err(err(
                0,
                CaptureErrorKind::Truncated {
                    what: "file magic",
                    needed: 4,
                    available: got as u64,
                },
            ));
        }
        let m = [input.buf[0], input.buf[1], input.buf[2], input.buf[3]];
        let (le, be) = (u32::from_le_bytes(m), u32::from_be_bytes(m));
        let (format, parser) = if le == NG_SHB {
            (Format::Pcapng, open_pcapng(&mut input)?)
        } else if le == PCAP_MAGIC_KUZNETZOV || be == PCAP_MAGIC_KUZNETZOV {
            return Err(err(
                0,
                CaptureErrorKind::Unsupported(
                    "Kuznetzov's modified pcap (magic 0xa1b2cd34); convert it with \
                     `editcap -F pcap IN OUT`"
                        .into(),
                ),
            ));
        } else if PCAP_MAGICS.contains(&le) || PCAP_MAGICS.contains(&be) {
            open_pcap(&mut input, be)?
        } else {
            return Err(err(0, CaptureErrorKind::BadMagic(be)));
        };
        Ok(CaptureReader {
            input,
            format,
            parser,
        })
    }

    /// The container format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.input.offset
    }

    /// The next packet, `Ok(None)` at a clean end of file, or an error naming the offset.
    pub fn next_record(&mut self) -> Result<Option<CaptureRecord<'_>>, CaptureError> {
        let inp = &mut self.input;
        loop {
            if inp.pos == inp.len && inp.fill(1)? == 0 {
                return Ok(None);
            }
            let at = inp.offset;
            let avail = &inp.buf[inp.pos..inp.len];
            let (step, what) = match &mut self.parser {
                Parser::Pcap {
                    parser,
                    linktype,
                    nanos,
                } => (
                    pcap_step(parser, *linktype, *nanos, avail, at)?,
                    "pcap record",
                ),
                Parser::Ng(parser) => (ng_step(parser, avail, at)?, "pcapng block"),
            };
            match step {
                Step::Packet(f, used) => {
                    let (a, b) = (inp.pos + f.data.0, inp.pos + f.data.1);
                    inp.advance(used);
                    return Ok(Some(CaptureRecord {
                        ts_ns: f.ts_ns,
                        linktype: f.linktype,
                        interface: f.interface,
                        orig_len: f.orig_len,
                        data: &inp.buf[a..b],
                        offset: f.offset,
                    }));
                }
                Step::Skip(used) => inp.advance(used),
                Step::Need(want) => inp.fill_or_truncated(want, what)?,
            }
        }
    }
}

fn open_pcap<R: Read>(inp: &mut Input<R>, magic_be: u32) -> Result<(Format, Parser), CaptureError> {
    let parser = loop {
        match PcapParser::new(&inp.buf[inp.pos..inp.len]) {
            Ok((rem, p)) => {
                let used = inp.len - inp.pos - rem.len();
                inp.advance(used);
                break p;
            }
            Err(PcapParseError::IncompleteBuffer(needed, _)) => {
                inp.fill_or_truncated(needed, "pcap file header")?;
            }
            Err(PcapParseError::Validation(_)) => {
                return Err(err(0, CaptureErrorKind::BadMagic(magic_be)));
            }
        }
    };
    let header = parser.header();
    if header.version_major != 2 {
        return Err(err(
            4,
            CaptureErrorKind::Unsupported(format!(
                "pcap major version {} (expected 2)",
                header.version_major
            )),
        ));
    }
    let nanos = header.ts_resolution == PcapTsResolution::NanoSecond;
    let format = Format::Pcap {
        nanos,
        big_endian: header.endianness == Endianness::Big,
    };
    // Bits 0-27 of the link-type field are the link type; 28-31 hold FCS information
    // (draft-ietf-opsawg-pcap §4, "LinkType and additional information").
    let linktype = u32::from(header.datalink) & 0x0fff_ffff;
    Ok((
        format,
        Parser::Pcap {
            parser,
            linktype,
            nanos,
        },
    ))
}

fn open_pcapng<R: Read>(inp: &mut Input<R>) -> Result<Parser, CaptureError> {
    let parser = loop {
        let avail = &inp.buf[inp.pos..inp.len];
        match PcapNgParser::new(avail) {
            Ok((rem, p)) => {
                let used = avail.len() - rem.len();
                inp.advance(used);
                break p;
            }
            Err(PcapNgParseError::IncompleteBuffer(needed, _)) => {
                let want = ng_want(avail.len(), needed);
                inp.fill_or_truncated(want, "pcapng block")?;
            }
            Err(e) => return Err(ng_error(e, 0, 0)),
        }
    };
    check_ng_version(&parser, 0)?;
    Ok(Parser::Ng(Box::new(parser)))
}

impl<R: Read> Input<R> {
    fn advance(&mut self, used: usize) {
        self.pos += used;
        self.offset += used as u64;
    }

    /// Reads until `want` bytes are buffered from `pos` or the file ends; returns how many are.
    fn fill(&mut self, want: usize) -> Result<usize, CaptureError> {
        if self.len - self.pos >= want || self.eof {
            return Ok(self.len - self.pos);
        }
        if self.pos + want > self.buf.len() {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
            if want > self.buf.len() {
                self.buf.resize(want, 0);
            }
        }
        while self.len - self.pos < want {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.len += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let at = self.offset + (self.len - self.pos) as u64;
                    return Err(err(at, CaptureErrorKind::Io(e)));
                }
            }
        }
        Ok(self.len - self.pos)
    }

    /// Buffers the `want` bytes of the structure `what` at `pos`: a length above
    /// [`MAX_RECORD_LEN`] is corrupt (and not allocated), a file ending first is truncated.
    fn fill_or_truncated(&mut self, want: usize, what: &'static str) -> Result<(), CaptureError> {
        if want as u64 > u64::from(MAX_RECORD_LEN) {
            return Err(corrupt(
                self.offset,
                format!("{what} claims {want} bytes (limit {MAX_RECORD_LEN})"),
            ));
        }
        let got = self.fill(want)?;
        if got < want {
            return Err(err(
                self.offset,
                CaptureErrorKind::Truncated {
                    what,
                    needed: want as u64,
                    available: got as u64,
                },
            ));
        }
        Ok(())
    }
}

/// Bytes a pcapng block at the current position needs, from the parser's `IncompleteBuffer`.
/// With fewer than 12 bytes buffered the parser asks for the 12-byte minimum; past that it
/// reports the block's total length minus the 8 header bytes (pcap-file 3.0.0-rc.3,
/// `RawBlock::from_slice`; the test `test_truncated_pcapng_needed_is_block_length` pins it).
fn ng_want(avail: usize, needed: usize) -> usize {
    if avail < NG_MIN_BLOCK {
        NG_MIN_BLOCK
    } else {
        needed.saturating_add(8)
    }
}

fn pcap_step(
    parser: &PcapParser,
    linktype: u32,
    nanos: bool,
    avail: &[u8],
    at: u64,
) -> Result<Step, CaptureError> {
    match parser.next_raw_packet(avail) {
        Ok((rem, p)) => {
            let used = avail.len() - rem.len();
            let start = index_in(avail, &p.data);
            let frac_ns = if nanos {
                u64::from(p.ts_frac)
            } else {
                u64::from(p.ts_frac) * 1000
            };
            Ok(Step::Packet(
                Found {
                    ts_ns: u64::from(p.ts_sec) * 1_000_000_000 + frac_ns,
                    linktype,
                    interface: 0,
                    orig_len: p.orig_len,
                    data: (start, start + p.data.len()),
                    offset: at,
                },
                used,
            ))
        }
        // Below 16 bytes the parser asks for the record header; past it, for the data.
        Err(PcapParseError::IncompleteBuffer(needed, _)) => {
            Ok(Step::Need(if avail.len() < PCAP_RECORD_HDR {
                PCAP_RECORD_HDR
            } else {
                PCAP_RECORD_HDR.saturating_add(needed)
            }))
        }
        Err(e) => Err(corrupt(at, format!("pcap record: {}", chain(&e)))),
    }
}

fn ng_step(parser: &mut PcapNgParser, avail: &[u8], at: u64) -> Result<Step, CaptureError> {
    let raw = match parser.next_raw_block(avail) {
        Ok((rem, raw)) => (avail.len() - rem.len(), raw),
        Err(PcapNgParseError::IncompleteBuffer(needed, _)) => {
            return Ok(Step::Need(ng_want(avail.len(), needed)));
        }
        Err(e) => return Err(ng_error(e, at, parser.interfaces().len())),
    };
    let (used, raw) = raw;
    let state = parser.state();
    let block_type = raw.type_;
    let found = |interface: u32, ts: Duration, orig_len: u32, data: &[u8]| {
        // The parser checked the interface id when it decoded the timestamp.
        let linktype = state
            .interfaces()
            .get(interface as usize)
            .map_or(0, |i| u32::from(i.linktype));
        let start = index_in(avail, data);
        Found {
            ts_ns: duration_ns(ts),
            linktype,
            interface,
            orig_len,
            data: (start, start + data.len()),
            offset: at,
        }
    };
    let is_packet = matches!(
        block_type,
        pcap_file::pcapng::blocks::ENHANCED_PACKET_BLOCK
            | pcap_file::pcapng::blocks::SIMPLE_PACKET_BLOCK
            | pcap_file::pcapng::blocks::PACKET_BLOCK
    );
    if !is_packet {
        if block_type == pcap_file::pcapng::blocks::SECTION_HEADER_BLOCK {
            check_ng_version(parser, at)?;
        }
        return Ok(Step::Skip(used));
    }
    let n_ifaces = state.interfaces().len();
    let block = raw
        .try_into_block(state)
        .map_err(|e| conversion_error(&e, at, n_ifaces))?;
    let f = match &block {
        Block::EnhancedPacket(b) => found(b.interface_id, b.timestamp, b.original_len, &b.data),
        Block::Packet(b) => found(
            u32::from(b.interface_id),
            b.timestamp,
            b.original_len,
            &b.data,
        ),
        // A Simple Packet Block has no timestamp and belongs to the first interface (§4.4).
        Block::SimplePacket(b) => found(0, Duration::ZERO, b.original_len, &b.data),
        _ => return Ok(Step::Skip(used)),
    };
    Ok(Step::Packet(f, used))
}

fn check_ng_version(parser: &PcapNgParser, at: u64) -> Result<(), CaptureError> {
    let major = parser.section().major_version;
    if major != 1 {
        return Err(err(
            at + 12,
            CaptureErrorKind::Unsupported(format!("pcapng major version {major}")),
        ));
    }
    Ok(())
}

/// A pcapng parse error as ours, at the offset of the block it concerns.
fn ng_error(e: PcapNgParseError, at: u64, n_ifaces: usize) -> CaptureError {
    match e {
        PcapNgParseError::InvalidFormat(f) => corrupt(
            at,
            match f {
                PcapNgFormatError::BlockLengthMismatch(a, b) => {
                    format!("pcapng block length mismatch: header says {a}, trailer says {b}")
                }
                PcapNgFormatError::BlockNotAligned(n) => {
                    format!("pcapng block total length {n} is not a multiple of 4")
                }
                PcapNgFormatError::BlockTooShort(min, n) => {
                    format!("pcapng block total length {n} is below the minimum of {min}")
                }
                PcapNgFormatError::InvalidMagicNumber(m) => format!(
                    "pcapng byte-order magic 0x{m:08x} is neither 0x1a2b3c4d nor its byte swap"
                ),
                other => format!("pcapng: {}", chain(&other)),
            },
        ),
        PcapNgParseError::BlockConversion(c)
        | PcapNgParseError::StateUpdate(StateUpdateError::BlockConversion(c)) => {
            conversion_error(&c, at, n_ifaces)
        }
        other => corrupt(at, format!("pcapng: {}", chain(&other))),
    }
}

fn conversion_error(c: &BlockConversionError, at: u64, n_ifaces: usize) -> CaptureError {
    let name = block_name(c.type_);
    match &*c.source {
        BlockContentParseError::Validation(ContentValidationError::InvalidInterfaceId(id)) => {
            corrupt(
                at,
                format!(
                    "pcapng {name} refers to interface {id} but the section defines {n_ifaces}"
                ),
            )
        }
        other => corrupt(at, format!("pcapng {name}: {}", chain(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcap::{linktype, PcapngWriter};

    #[test]
    fn test_truncated_pcapng_needed_is_block_length() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let a = w.add_interface(linktype::ETHERNET, 0, 9).unwrap();
        w.write_packet(a, 5, &[1u8; 60]).unwrap();
        let bytes = w.into_inner().unwrap();
        // SHB 28 + IDB: the EPB starts after them; cut it after its first 20 bytes.
        let idb_len = u32::from_le_bytes(bytes[28 + 4..28 + 8].try_into().unwrap()) as usize;
        let epb = 28 + idb_len;
        let epb_len = u32::from_le_bytes(bytes[epb + 4..epb + 8].try_into().unwrap());
        let mut r = CaptureReader::new(&bytes[..epb + 20]).unwrap();
        let e = r.next_record().unwrap_err();
        assert_eq!(e.offset, epb as u64);
        match e.kind {
            CaptureErrorKind::Truncated {
                needed, available, ..
            } => assert_eq!((needed, available), (u64::from(epb_len), 20)),
            other => panic!("{other:?}"),
        }
    }
}
