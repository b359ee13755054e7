//! The TCP timestamp option (RFC 7323 §3: TSval, TSecr) of every segment that carries it, per
//! connection and direction, for RTT estimators that pair the option values themselves — the
//! timestamp echo near a receiver (python/tcplab/identify/tsrtt.py; Veal, Li & Lowekamp, PAM
//! 2005).
//!
//! One pass over the capture through the reader, [`crate::decode`] and the analyzer's own
//! connection tracking ([`Analyzer::feed_segment`]), so connection indices and directions are
//! those of the report [`analyze_reader`](super::analyze_reader) gives for the same capture and
//! configuration, four-tuple reuse included (a new connection after tcptrace's idle limit or a
//! new SYN). The analysis statistics are computed alongside and dropped. Unlike the analyzer,
//! what this returns grows with the number of packets: 17 bytes per segment with the option.

use super::{Analyzer, AnalyzerConfig, NoSink};
use crate::decode::{decode, Decoded};
use crate::pcap::{CaptureError, CaptureErrorKind, CaptureReader};
use std::io::Read;
use std::path::Path;

/// The segments of one direction of a connection that carry the timestamp option, in capture
/// order (columns of equal length).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirTimestamps {
    /// Capture time, ns since the Unix epoch (as [`crate::pcap::CaptureRecord::ts_ns`]).
    pub t_ns: Vec<u64>,
    pub tsval: Vec<u32>,
    pub tsecr: Vec<u32>,
    /// The segment carries data: its payload length, from the IP header, is above zero.
    pub data: Vec<bool>,
}

impl DirTimestamps {
    fn push(&mut self, t_ns: u64, (tsval, tsecr): (u32, u32), data: bool) {
        self.t_ns.push(t_ns);
        self.tsval.push(tsval);
        self.tsecr.push(tsecr);
        self.data.push(data);
    }

    pub fn len(&self) -> usize {
        self.t_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_ns.is_empty()
    }
}

/// Reads a whole capture from `r`: element `i` holds connection `i`'s directions, indexed by
/// [`super::Dir::index`] (A→B, B→A). Every connection of the report is there, with empty
/// columns when it carried no timestamps.
pub fn timestamps_reader<R: Read>(
    r: R,
    cfg: AnalyzerConfig,
) -> Result<Vec<[DirTimestamps; 2]>, CaptureError> {
    let mut reader = CaptureReader::new(r)?;
    let mut a = Analyzer::new(cfg);
    let mut out: Vec<[DirTimestamps; 2]> = Vec::new();
    while let Some(rec) = reader.next_record()? {
        // What the analyzer does not analyse (not TCP, malformed) belongs to no connection.
        let Ok(Decoded::Tcp(seg)) = decode(rec.linktype, rec.data) else {
            continue;
        };
        let (ci, d) = a.feed_segment(rec.ts_ns, &seg, &mut NoSink);
        if ci >= out.len() {
            out.resize_with(ci + 1, Default::default);
        }
        if let Some(ts) = seg.tcp.options.timestamp {
            out[ci][d.index()].push(rec.ts_ns, ts, seg.payload_len > 0);
        }
    }
    Ok(out)
}

/// [`timestamps_reader`] of the file at `path`. I/O errors opening the file have offset 0.
pub fn timestamps_path(
    path: &Path,
    cfg: AnalyzerConfig,
) -> Result<Vec<[DirTimestamps; 2]>, CaptureError> {
    let f = std::fs::File::open(path).map_err(|e| CaptureError {
        offset: 0,
        kind: CaptureErrorKind::Io(e),
    })?;
    timestamps_reader(f, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze_reader, Dir};
    use crate::pcap::{emit_tcp_frame, LinkKind, PcapWriter, PcapngWriter};
    use crate::synth::{BulkConfig, BulkTransfer};

    fn small(link: LinkKind, ipv6: bool) -> BulkConfig {
        BulkConfig {
            segments: 300,
            loss_every: 50,
            link,
            ipv6,
            ..BulkConfig::default()
        }
    }

    /// Captured frames: (time, bytes).
    type Frames = Vec<(u64, Vec<u8>)>;

    /// The transfers' frames in capture order, and what each direction's timestamps must be (A
    /// sends the first packet of each transfer).
    fn packets(cfgs: &[BulkConfig]) -> (Frames, Vec<[DirTimestamps; 2]>) {
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for &cfg in cfgs {
            let mut g = BulkTransfer::new(cfg);
            let mut dirs: [DirTimestamps; 2] = Default::default();
            let mut a = None;
            while let Some((ts, f)) = g.next_packet() {
                let a = *a.get_or_insert(f.src);
                let d = if f.src == a { Dir::AtoB } else { Dir::BtoA };
                if let Some(x) = f.tcp.options.timestamp {
                    dirs[d.index()].push(ts, x, f.payload_len > 0);
                }
                let mut buf = Vec::new();
                emit_tcp_frame(&mut buf, &f).unwrap();
                frames.push((ts, buf));
            }
            want.push(dirs);
        }
        (frames, want)
    }

    fn pcap(lt: u32, frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut w = PcapWriter::with_options(Vec::new(), lt, 262_144).unwrap();
        for (ts, f) in frames {
            w.write_packet(*ts, f).unwrap();
        }
        w.into_inner().unwrap()
    }

    fn pcapng(lt: u32, frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let i = w.add_interface(lt, 262_144, 9).unwrap();
        for (ts, f) in frames {
            w.write_packet(i, *ts, f).unwrap();
        }
        w.into_inner().unwrap()
    }

    #[test]
    fn test_timestamps_are_those_sent_on_every_link_and_format() {
        let links = [
            LinkKind::Ethernet,
            LinkKind::LinuxSll,
            LinkKind::LinuxSll2,
            LinkKind::RawIp,
            LinkKind::Null,
        ];
        for link in links {
            for ipv6 in [false, true] {
                let cfg = small(link, ipv6);
                let (frames, want) = packets(&[cfg]);
                // data both ways is told apart: the sender's segments carry data, not the ACKs
                assert!(want[0][0].data.iter().filter(|&&d| d).count() >= 300);
                assert!(!want[0][1].data.iter().any(|&d| d));
                for (fmt, bytes) in [
                    ("pcap", pcap(link.linktype(), &frames)),
                    ("pcapng", pcapng(link.linktype(), &frames)),
                ] {
                    let got = timestamps_reader(&bytes[..], AnalyzerConfig::default()).unwrap();
                    assert_eq!(got, want, "{link:?} ipv6={ipv6} {fmt}");
                }
            }
        }
    }

    #[test]
    fn test_connections_are_keyed_as_the_report_keys_them() {
        // the same four-tuple again after tcptrace's 4-minute idle limit: a second connection
        let first = small(LinkKind::Ethernet, false);
        let second = BulkConfig {
            t0_ns: first.t0_ns + 600_000_000_000,
            segments: 120,
            ..first
        };
        let (frames, want) = packets(&[first, second]);
        let bytes = pcap(first.link.linktype(), &frames);
        let cfg = AnalyzerConfig::default();
        let got = timestamps_reader(&bytes[..], cfg).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got, want);
        let rep = analyze_reader(&bytes[..], cfg, &mut NoSink).unwrap();
        assert_eq!(rep.connections.len(), 2);
        for (c, g) in rep.connections.iter().zip(&got) {
            for d in [Dir::AtoB, Dir::BtoA] {
                assert_eq!(c.stats(d).packets, g[d.index()].len() as u64);
            }
        }
    }

    #[test]
    fn test_connection_without_timestamps_is_listed_empty() {
        let cfg = BulkConfig {
            timestamps: false,
            ..small(LinkKind::Ethernet, false)
        };
        let (frames, _) = packets(&[cfg]);
        let got = timestamps_reader(
            &pcap(cfg.link.linktype(), &frames)[..],
            AnalyzerConfig::default(),
        )
        .unwrap();
        assert_eq!(got, vec![<[DirTimestamps; 2]>::default()]);
    }

    #[test]
    fn test_frames_of_no_connection_are_skipped() {
        // an ARP frame and a malformed TCP header between the packets change nothing
        let cfg = small(LinkKind::Ethernet, false);
        let (mut frames, want) = packets(&[cfg]);
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let mut bad = frames[5].1.clone();
        bad[14 + 20 + 12] = 0x10; // TCP data offset 1 (below 5)
        let t = frames[5].0;
        frames.insert(5, (t, bad));
        frames.insert(5, (t, arp));
        let got = timestamps_reader(
            &pcap(cfg.link.linktype(), &frames)[..],
            AnalyzerConfig::default(),
        )
        .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn test_unreadable_capture_is_an_error_naming_the_offset() {
        let e = timestamps_reader(&b"not a capture"[..], AnalyzerConfig::default()).unwrap_err();
        assert!(matches!(e.kind, CaptureErrorKind::BadMagic(_)), "{e}");
        let e = timestamps_path(Path::new("/nonexistent/x.pcap"), AnalyzerConfig::default())
            .unwrap_err();
        assert!(matches!(e.kind, CaptureErrorKind::Io(_)) && e.offset == 0);
    }
}
