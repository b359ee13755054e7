//! Streaming reader for pcap and pcapng over any `Read`: one record in memory at a time.

use super::{CaptureError, CaptureErrorKind, MAX_RECORD_LEN};
use std::io::{BufReader, ErrorKind, Read};

const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// Alexey Kuznetzov's "modified" pcap: 8 extra bytes per record header (ifindex, protocol,
/// pkt_type, padding).
const PCAP_MAGIC_KUZNETZOV: u32 = 0xa1b2_cd34;

const NG_SHB: u32 = 0x0a0d_0d0a;
const NG_IDB: u32 = 0x0000_0001;
const NG_OPB: u32 = 0x0000_0002;
const NG_SPB: u32 = 0x0000_0003;
const NG_EPB: u32 = 0x0000_0006;
const NG_BOM: u32 = 0x1a2b_3c4d;

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

#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp unit: `(is_power_of_two, exponent)`; units are 10^-e or 2^-e seconds.
    tsresol: (bool, u8),
    tsoffset_s: i64,
}

/// A streaming capture reader. Call [`CaptureReader::next_record`] until it returns `Ok(None)`.
pub struct CaptureReader<R: Read> {
    r: BufReader<R>,
    /// Bytes consumed so far (the file offset of the next unread byte).
    offset: u64,
    format: Format,
    buf: Vec<u8>,
    // pcap
    pcap_linktype: u32,
    pcap_record_hdr_len: usize,
    // pcapng
    ng_big_endian: bool,
    interfaces: Vec<Interface>,
}

fn err(offset: u64, kind: CaptureErrorKind) -> CaptureError {
    CaptureError { offset, kind }
}

fn corrupt(offset: u64, s: String) -> CaptureError {
    err(offset, CaptureErrorKind::Corrupt(s))
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header (pcap) or the first Section Header Block (pcapng).
    pub fn new(inner: R) -> Result<Self, CaptureError> {
        let mut me = CaptureReader {
            r: BufReader::with_capacity(1 << 20, inner),
            offset: 0,
            format: Format::Pcapng,
            buf: Vec::with_capacity(1 << 16),
            pcap_linktype: 0,
            pcap_record_hdr_len: 16,
            ng_big_endian: false,
            interfaces: Vec::new(),
        };
        let mut m = [0u8; 4];
        let got = me.read_up_to(&mut m)?;
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
        let le = u32::from_le_bytes(m);
        let be = u32::from_be_bytes(m);
        if le == NG_SHB {
            me.format = Format::Pcapng;
            me.read_ng_block_after_type(m, 0)?;
            return Ok(me);
        }
        let (big_endian, magic) = match (le, be) {
            (PCAP_MAGIC_US | PCAP_MAGIC_NS | PCAP_MAGIC_KUZNETZOV, _) => (false, le),
            (_, PCAP_MAGIC_US | PCAP_MAGIC_NS | PCAP_MAGIC_KUZNETZOV) => (true, be),
            _ => return Err(err(0, CaptureErrorKind::BadMagic(be))),
        };
        let mut h = [0u8; 20];
        me.read_exact_or(&mut h, 0, "pcap file header", 24, 4)?;
        let u16at = |b: &[u8], i: usize| {
            let x = [b[i], b[i + 1]];
            if big_endian {
                u16::from_be_bytes(x)
            } else {
                u16::from_le_bytes(x)
            }
        };
        let u32at = |b: &[u8], i: usize| {
            let x = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            if big_endian {
                u32::from_be_bytes(x)
            } else {
                u32::from_le_bytes(x)
            }
        };
        let major = u16at(&h, 0);
        if major != 2 {
            return Err(err(
                4,
                CaptureErrorKind::Unsupported(format!("pcap major version {major} (expected 2)")),
            ));
        }
        // Bits 0-27 of the link-type field are the link type; 28-31 hold FCS information
        // (draft-ietf-opsawg-pcap §4, "LinkType and additional information").
        me.pcap_linktype = u32at(&h, 16) & 0x0fff_ffff;
        me.format = Format::Pcap {
            nanos: magic == PCAP_MAGIC_NS,
            big_endian,
        };
        if magic == PCAP_MAGIC_KUZNETZOV {
            me.pcap_record_hdr_len = 24;
        }
        Ok(me)
    }

    /// The container format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next packet, `Ok(None)` at a clean end of file, or an error naming the offset.
    pub fn next_record(&mut self) -> Result<Option<CaptureRecord<'_>>, CaptureError> {
        match self.format {
            Format::Pcap { nanos, big_endian } => self.next_pcap(nanos, big_endian),
            Format::Pcapng => self.next_ng(),
        }
    }

    // ---------------------------------------------------------------- low-level reading

    /// Reads as many bytes as possible into `b` (stopping only at EOF); returns the count.
    fn read_up_to(&mut self, b: &mut [u8]) -> Result<usize, CaptureError> {
        let mut got = 0;
        while got < b.len() {
            match self.r.read(&mut b[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(err(self.offset + got as u64, CaptureErrorKind::Io(e))),
            }
        }
        self.offset += got as u64;
        Ok(got)
    }

    /// Reads exactly `b.len()` bytes of a structure that started at `start` and is `total`
    /// bytes long, of which `already` were read before; a short read is a `Truncated` error.
    fn read_exact_or(
        &mut self,
        b: &mut [u8],
        start: u64,
        what: &'static str,
        total: u64,
        already: u64,
    ) -> Result<(), CaptureError> {
        let got = self.read_up_to(b)?;
        if got < b.len() {
            return Err(err(
                start,
                CaptureErrorKind::Truncated {
                    what,
                    needed: total,
                    available: already + got as u64,
                },
            ));
        }
        Ok(())
    }

    /// Reads `n` bytes into the internal buffer (reused across records).
    fn read_into_buf(
        &mut self,
        n: usize,
        start: u64,
        what: &'static str,
        total: u64,
        already: u64,
    ) -> Result<(), CaptureError> {
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        let mut buf = std::mem::take(&mut self.buf);
        let res = self.read_exact_or(&mut buf[..n], start, what, total, already);
        self.buf = buf;
        res
    }

    // ---------------------------------------------------------------- pcap

    fn next_pcap(
        &mut self,
        nanos: bool,
        big_endian: bool,
    ) -> Result<Option<CaptureRecord<'_>>, CaptureError> {
        let start = self.offset;
        let hl = self.pcap_record_hdr_len;
        let mut h = [0u8; 24];
        let got = self.read_up_to(&mut h[..hl])?;
        if got == 0 {
            return Ok(None);
        }
        if got < hl {
            return Err(err(
                start,
                CaptureErrorKind::Truncated {
                    what: "pcap record header",
                    needed: hl as u64,
                    available: got as u64,
                },
            ));
        }
        let u32at = |i: usize| {
            let x = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian {
                u32::from_be_bytes(x)
            } else {
                u32::from_le_bytes(x)
            }
        };
        let (sec, frac, incl, orig) = (u32at(0), u32at(4), u32at(8), u32at(12));
        if incl > MAX_RECORD_LEN {
            return Err(corrupt(
                start,
                format!("pcap record claims {incl} captured bytes (limit {MAX_RECORD_LEN})"),
            ));
        }
        let n = incl as usize;
        self.read_into_buf(
            n,
            start,
            "pcap packet data",
            hl as u64 + u64::from(incl),
            hl as u64,
        )?;
        let ts_ns = u64::from(sec) * 1_000_000_000 + u64::from(frac) * if nanos { 1 } else { 1000 };
        Ok(Some(CaptureRecord {
            ts_ns,
            linktype: self.pcap_linktype,
            interface: 0,
            orig_len: orig,
            data: &self.buf[..n],
            offset: start,
        }))
    }

    // ---------------------------------------------------------------- pcapng

    fn ng_u16(&self, b: &[u8]) -> u16 {
        if self.ng_big_endian {
            u16::from_be_bytes([b[0], b[1]])
        } else {
            u16::from_le_bytes([b[0], b[1]])
        }
    }

    fn ng_u32(&self, b: &[u8]) -> u32 {
        if self.ng_big_endian {
            u32::from_be_bytes([b[0], b[1], b[2], b[3]])
        } else {
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        }
    }

    /// Reads a block whose 4 type bytes were already consumed; leaves its body (between the
    /// length fields) in `self.buf[..body_len]`; returns (block type, body length).
    fn read_ng_block_after_type(
        &mut self,
        type_bytes: [u8; 4],
        start: u64,
    ) -> Result<(u32, usize), CaptureError> {
        let mut lb = [0u8; 4];
        self.read_exact_or(&mut lb, start, "pcapng block header", 8, 4)?;
        let is_shb = u32::from_le_bytes(type_bytes) == NG_SHB;
        if is_shb {
            // The byte-order magic decides how every later field of the section is read.
            let mut bom = [0u8; 4];
            self.read_exact_or(&mut bom, start, "pcapng section header block", 28, 8)?;
            self.ng_big_endian = match (u32::from_le_bytes(bom), u32::from_be_bytes(bom)) {
                (NG_BOM, _) => false,
                (_, NG_BOM) => true,
                _ => {
                    return Err(corrupt(
                        start + 8,
                        format!(
                            "pcapng byte-order magic 0x{:08x} is neither 0x1a2b3c4d nor swapped",
                            u32::from_be_bytes(bom)
                        ),
                    ))
                }
            };
        }
        let btype = self.ng_u32(&type_bytes);
        let total = self.ng_u32(&lb);
        let min = if is_shb { 28 } else { 12 };
        if total < min || !total.is_multiple_of(4) || total > MAX_RECORD_LEN {
            return Err(corrupt(
                start + 4,
                format!(
                    "pcapng block type 0x{btype:08x} has total length {total} \
                     (must be a multiple of 4, at least {min}, at most {MAX_RECORD_LEN})"
                ),
            ));
        }
        // Body after what we have read, plus the trailing length.
        let consumed_hdr: usize = if is_shb { 12 } else { 8 };
        let rest = total as usize - consumed_hdr;
        self.read_into_buf(
            rest,
            start,
            "pcapng block",
            u64::from(total),
            consumed_hdr as u64,
        )?;
        let trailer = self.ng_u32(&self.buf[rest - 4..rest]);
        if trailer != total {
            return Err(corrupt(
                start,
                format!(
                    "pcapng block length mismatch: header says {total}, trailer says {trailer}"
                ),
            ));
        }
        let body_len = rest - 4;
        if is_shb {
            // Body as we keep it: starts after the byte-order magic.
            let major = self.ng_u16(&self.buf[0..2]);
            if major != 1 {
                return Err(err(
                    start + 12,
                    CaptureErrorKind::Unsupported(format!("pcapng major version {major}")),
                ));
            }
            self.interfaces.clear();
        }
        Ok((btype, body_len))
    }

    fn parse_idb(&mut self, body_len: usize, start: u64) -> Result<(), CaptureError> {
        if body_len < 8 {
            return Err(corrupt(
                start,
                format!("interface description block body of {body_len} bytes"),
            ));
        }
        let b = &self.buf[..body_len];
        let linktype = u32::from(self.ng_u16(&b[0..2]));
        let snaplen = self.ng_u32(&b[4..8]);
        let mut iface = Interface {
            linktype,
            snaplen,
            tsresol: (false, 6),
            tsoffset_s: 0,
        };
        // Options: code (2), length (2), value padded to 4 (pcapng §3.5).
        let mut at = 8;
        while at + 4 <= body_len {
            let code = self.ng_u16(&b[at..at + 2]);
            let len = usize::from(self.ng_u16(&b[at + 2..at + 4]));
            let vstart = at + 4;
            if vstart + len > body_len {
                return Err(corrupt(
                    start,
                    format!("interface option {code} of length {len} runs past the block"),
                ));
            }
            let v = &b[vstart..vstart + len];
            match (code, len) {
                (0, _) => break,
                (9, 1) => iface.tsresol = (v[0] & 0x80 != 0, v[0] & 0x7f),
                (14, 8) => {
                    let x = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
                    iface.tsoffset_s = if self.ng_big_endian {
                        i64::from_be_bytes(x)
                    } else {
                        i64::from_le_bytes(x)
                    };
                }
                _ => {}
            }
            at = vstart + len.div_ceil(4) * 4;
        }
        self.interfaces.push(iface);
        Ok(())
    }

    fn iface(&self, id: u32, start: u64, what: &str) -> Result<Interface, CaptureError> {
        self.interfaces.get(id as usize).copied().ok_or_else(|| {
            corrupt(
                start,
                format!(
                    "{what} refers to interface {id} but the section defines {}",
                    self.interfaces.len()
                ),
            )
        })
    }

    fn next_ng(&mut self) -> Result<Option<CaptureRecord<'_>>, CaptureError> {
        loop {
            let start = self.offset;
            let mut tb = [0u8; 4];
            let got = self.read_up_to(&mut tb)?;
            if got == 0 {
                return Ok(None);
            }
            if got < 4 {
                return Err(err(
                    start,
                    CaptureErrorKind::Truncated {
                        what: "pcapng block header",
                        needed: 8,
                        available: got as u64,
                    },
                ));
            }
            let (btype, body_len) = self.read_ng_block_after_type(tb, start)?;
            match btype {
                NG_SHB => continue,
                NG_IDB => {
                    self.parse_idb(body_len, start)?;
                    continue;
                }
                NG_EPB | NG_OPB => {
                    let b = &self.buf[..body_len];
                    if body_len < 20 {
                        return Err(corrupt(
                            start,
                            format!("packet block body of {body_len} bytes"),
                        ));
                    }
                    let (if_id, ts_hi) = if btype == NG_EPB {
                        (self.ng_u32(&b[0..4]), self.ng_u32(&b[4..8]))
                    } else {
                        (u32::from(self.ng_u16(&b[0..2])), self.ng_u32(&b[4..8]))
                    };
                    let ts_lo = self.ng_u32(&b[8..12]);
                    let caplen = self.ng_u32(&b[12..16]);
                    let orig = self.ng_u32(&b[16..20]);
                    if 20 + caplen as usize > body_len {
                        return Err(corrupt(
                            start,
                            format!(
                                "packet block claims {caplen} captured bytes but holds only {}",
                                body_len - 20
                            ),
                        ));
                    }
                    let iface = self.iface(if_id, start, "enhanced packet block")?;
                    let ts = (u64::from(ts_hi) << 32) | u64::from(ts_lo);
                    let ts_ns = ts_to_ns(ts, iface.tsresol, iface.tsoffset_s);
                    let n = caplen as usize;
                    return Ok(Some(CaptureRecord {
                        ts_ns,
                        linktype: iface.linktype,
                        interface: if_id,
                        orig_len: orig,
                        data: &self.buf[20..20 + n],
                        offset: start,
                    }));
                }
                NG_SPB => {
                    if body_len < 4 {
                        return Err(corrupt(start, "simple packet block without length".into()));
                    }
                    let orig = self.ng_u32(&self.buf[0..4]);
                    let iface = self.iface(0, start, "simple packet block")?;
                    let mut n = (orig as usize).min(body_len - 4);
                    if iface.snaplen != 0 {
                        n = n.min(iface.snaplen as usize);
                    }
                    return Ok(Some(CaptureRecord {
                        ts_ns: 0,
                        linktype: iface.linktype,
                        interface: 0,
                        orig_len: orig,
                        data: &self.buf[4..4 + n],
                        offset: start,
                    }));
                }
                _ => continue, // NRB, ISB, DSB, custom blocks: not needed for analysis
            }
        }
    }
}

/// Converts a pcapng timestamp in interface units to nanoseconds since the epoch, saturating.
fn ts_to_ns(ts: u64, tsresol: (bool, u8), offset_s: i64) -> u64 {
    let (pow2, e) = tsresol;
    let ts = u128::from(ts);
    let ns: u128 = if pow2 {
        if e >= 100 {
            0
        } else {
            (ts * 1_000_000_000) >> e
        }
    } else if e <= 9 {
        ts * 10u128.pow(u32::from(9 - e))
    } else if e - 9 > 38 {
        0
    } else {
        ts / 10u128.pow(u32::from(e - 9))
    };
    let with_off = ns as i128 + i128::from(offset_s) * 1_000_000_000;
    with_off.clamp(0, i128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_tsresol_conversions() {
        assert_eq!(ts_to_ns(1_500_000, (false, 6), 0), 1_500_000_000);
        assert_eq!(ts_to_ns(7, (false, 9), 0), 7);
        assert_eq!(ts_to_ns(12_345, (false, 12), 0), 12);
        assert_eq!(ts_to_ns(1 << 20, (true, 20), 0), 1_000_000_000);
        assert_eq!(ts_to_ns(1, (false, 0), 5), 6_000_000_000);
        assert_eq!(ts_to_ns(0, (false, 6), -5), 0, "negative clamps to zero");
        assert_eq!(ts_to_ns(u64::MAX, (false, 0), 0), u64::MAX, "saturates");
        assert_eq!(ts_to_ns(u64::MAX, (false, 127), 0), 0);
        assert_eq!(ts_to_ns(u64::MAX, (true, 127), 0), 0);
    }
}
