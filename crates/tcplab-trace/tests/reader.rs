//! Capture reader: formats, byte orders, resolutions, and every way a file can be cut or
//! corrupted (a clear error naming the offset, never a panic).

use tcplab_trace::pcap::{
    linktype, CaptureErrorKind, CaptureReader, Format, PcapWriter, PcapngWriter,
};

/// (timestamp, link type, data, offset) of each record.
type Records = Vec<(u64, u32, Vec<u8>, u64)>;

fn read_all(bytes: &[u8]) -> Result<Records, tcplab_trace::pcap::CaptureError> {
    let mut r = CaptureReader::new(bytes)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push((rec.ts_ns, rec.linktype, rec.data.to_vec(), rec.offset));
    }
    Ok(out)
}

fn sample_pcap() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    w.write_packet(1_000_000_001, &[1u8; 60]).unwrap();
    w.write_packet(1_000_000_002, &[2u8; 61]).unwrap();
    w.write_packet(2_000_000_000, &[3u8; 14]).unwrap();
    w.into_inner().unwrap()
}

fn sample_pcapng() -> Vec<u8> {
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    let a = w.add_interface(linktype::ETHERNET, 0, 9).unwrap();
    let b = w.add_interface(linktype::LINUX_SLL, 0, 6).unwrap();
    w.write_packet(a, 5, &[1u8; 60]).unwrap();
    w.write_packet(b, 7_000, &[2u8; 61]).unwrap();
    w.write_packet(a, 9, &[3u8; 3]).unwrap();
    w.into_inner().unwrap()
}

/// Converts our little-endian nanosecond pcap into big-endian microsecond pcap.
fn to_big_endian_us(le: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_be_bytes());
    out.extend_from_slice(&2u16.to_be_bytes());
    out.extend_from_slice(&4u16.to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&262_144u32.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    let mut at = 24;
    while at < le.len() {
        let f = |i: usize| u32::from_le_bytes(le[at + i..at + i + 4].try_into().unwrap());
        let (s, ns, incl, orig) = (f(0), f(4), f(8), f(12));
        for v in [s, ns / 1000, incl, orig] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&le[at + 16..at + 16 + incl as usize]);
        at += 16 + incl as usize;
    }
    out
}

#[test]
fn test_reader_pcap_ns_roundtrip_and_offsets() {
    let bytes = sample_pcap();
    let mut r = CaptureReader::new(&bytes[..]).unwrap();
    assert_eq!(
        r.format(),
        Format::Pcap {
            nanos: true,
            big_endian: false
        }
    );
    let first = r.next_record().unwrap().unwrap();
    assert_eq!(
        (first.ts_ns, first.offset, first.data.len()),
        (1_000_000_001, 24, 60)
    );
    let recs = read_all(&bytes).unwrap();
    assert_eq!(
        recs.iter().map(|r| r.3).collect::<Vec<_>>(),
        vec![24, 24 + 76, 24 + 76 + 77]
    );
}

#[test]
fn test_reader_pcap_big_endian_microseconds() {
    let be = to_big_endian_us(&sample_pcap());
    let mut r = CaptureReader::new(&be[..]).unwrap();
    assert_eq!(
        r.format(),
        Format::Pcap {
            nanos: false,
            big_endian: true
        }
    );
    let a = r.next_record().unwrap().unwrap();
    assert_eq!((a.ts_ns, a.linktype, a.data.len()), (1_000_000_000, 1, 60));
    assert_eq!(read_all(&be).unwrap().len(), 3);
}

#[test]
fn test_reader_pcapng_multiple_interfaces_and_tsresol() {
    let recs = read_all(&sample_pcapng()).unwrap();
    let got: Vec<_> = recs.iter().map(|r| (r.0, r.1, r.2.len())).collect();
    // 7000 ns on a microsecond interface is 7 µs.
    assert_eq!(got, vec![(5, 1, 60), (7_000, 113, 61), (9, 1, 3)]);
}

#[test]
fn test_reader_pcapng_big_endian_section() {
    // Hand-built big-endian SHB + IDB (µs, no options) + EPB.
    let mut b = Vec::new();
    let be32 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_be_bytes());
    be32(&mut b, 0x0a0d_0d0a);
    be32(&mut b, 28);
    be32(&mut b, 0x1a2b_3c4d);
    b.extend_from_slice(&[0, 1, 0, 0]);
    b.extend_from_slice(&(-1i64).to_be_bytes());
    be32(&mut b, 28);
    be32(&mut b, 1);
    be32(&mut b, 20);
    b.extend_from_slice(&[0, 101, 0, 0]);
    be32(&mut b, 65535);
    be32(&mut b, 20);
    be32(&mut b, 6);
    be32(&mut b, 36);
    be32(&mut b, 0);
    be32(&mut b, 0);
    be32(&mut b, 2_500_000); // 2.5 s in µs
    be32(&mut b, 3);
    be32(&mut b, 3);
    b.extend_from_slice(&[0x45, 0, 0, 0]);
    be32(&mut b, 36);
    let recs = read_all(&b).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].0, recs[0].1, recs[0].2.clone()),
        (2_500_000_000, 101, vec![0x45, 0, 0])
    );
}

#[test]
fn test_reader_truncated_everywhere_pcap() {
    let bytes = sample_pcap();
    let boundaries = [24usize, 100, 177, bytes.len()];
    for cut in 0..bytes.len() {
        let res = read_all(&bytes[..cut]);
        if boundaries.contains(&cut) {
            assert!(
                res.is_ok(),
                "cut at record boundary {cut} must read cleanly"
            );
            continue;
        }
        let e = res.expect_err(&format!("cut at {cut} must fail"));
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("at byte offset {}", e.offset)),
            "{msg}"
        );
        match e.kind {
            CaptureErrorKind::Empty => assert_eq!(cut, 0),
            CaptureErrorKind::Truncated { .. } => {
                // The offset names the structure that is cut: file header or a record.
                let start = boundaries
                    .iter()
                    .rev()
                    .find(|&&b| b <= cut)
                    .copied()
                    .unwrap_or(0);
                assert_eq!(e.offset, start as u64, "cut at {cut}: {msg}");
            }
            other => panic!("cut at {cut}: unexpected {other:?}"),
        }
    }
}

#[test]
fn test_reader_truncated_everywhere_pcapng() {
    let bytes = sample_pcapng();
    // Block starts: SHB 0, IDB 28, IDB 60, EPB 92 (32+60 = 92 → next 184), EPB 184 (+96), EPB 280.
    let mut starts = vec![0usize];
    let mut at = 0;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        at += len;
        starts.push(at);
    }
    for cut in 0..bytes.len() {
        let res = read_all(&bytes[..cut]);
        if starts.contains(&cut) && cut > 0 {
            assert!(res.is_ok(), "cut at block boundary {cut}");
            continue;
        }
        let e = res.expect_err(&format!("cut at {cut} must fail"));
        let start = starts.iter().rev().find(|&&b| b <= cut).copied().unwrap();
        if cut > 0 {
            assert_eq!(e.offset, start as u64, "cut at {cut}: {e}");
            assert!(
                matches!(e.kind, CaptureErrorKind::Truncated { .. }),
                "cut at {cut}: {e}"
            );
        }
    }
}

#[test]
fn test_reader_bad_magic_and_empty() {
    let e = read_all(b"GIF89a....................").unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::BadMagic(_)));
    assert_eq!(e.offset, 0);
    assert!(
        e.to_string().contains("not a pcap or pcapng capture"),
        "{e}"
    );
    assert!(matches!(
        read_all(b"").unwrap_err().kind,
        CaptureErrorKind::Empty
    ));
    // Shorter than a pcap file header, and no capture: bad magic, not a truncated header.
    let e = read_all(b"GIF89a").unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::BadMagic(_)), "{e}");
    // A real pcap magic followed by too little is a truncated header.
    let e = read_all(&sample_pcap()[..10]).unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::Truncated { .. }), "{e}");
}

#[test]
fn test_reader_huge_record_length_is_corrupt_not_allocation() {
    let mut bytes = sample_pcap();
    bytes[24 + 8..24 + 12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let e = read_all(&bytes).unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, 24);
}

#[test]
fn test_reader_pcapng_length_mismatch_and_alignment() {
    let good = sample_pcapng();
    // Trailer of the first EPB (at 92, length 92) altered.
    let mut bad = good.clone();
    bad[92 + 92 - 4] ^= 0x40;
    let e = read_all(&bad).unwrap_err();
    assert_eq!(e.offset, 92);
    assert!(e.to_string().contains("block length mismatch"), "{e}");
    // Length not a multiple of 4: the offset names the block whose length field is wrong.
    let mut bad = good.clone();
    bad[92 + 4] = 93;
    let e = read_all(&bad).unwrap_err();
    assert!(e.to_string().contains("multiple of 4"), "{e}");
    assert_eq!(e.offset, 92);
}

#[test]
fn test_reader_pcapng_unknown_interface_and_overlong_caplen() {
    let good = sample_pcapng();
    let mut bad = good.clone();
    bad[92 + 8] = 9; // interface id 9
    let e = read_all(&bad).unwrap_err();
    assert!(e.to_string().contains("refers to interface 9"), "{e}");
    // Captured length above the original length (60).
    let mut bad = good.clone();
    bad[92 + 20..92 + 24].copy_from_slice(&1000u32.to_le_bytes());
    let e = read_all(&bad).unwrap_err();
    assert_eq!(e.offset, 92);
    assert!(e.to_string().contains("60B on wire, 1000B captured"), "{e}");
    // Captured length beyond the block's end.
    let mut bad = good;
    bad[92 + 20..92 + 24].copy_from_slice(&1000u32.to_le_bytes());
    bad[92 + 24..92 + 28].copy_from_slice(&1000u32.to_le_bytes());
    let e = read_all(&bad).unwrap_err();
    assert_eq!(e.offset, 92);
    assert!(
        matches!(e.kind, CaptureErrorKind::Corrupt(_)) && e.to_string().contains("need 1000B"),
        "{e}"
    );
}

#[test]
fn test_reader_pcapng_simple_packet_block() {
    let mut b = Vec::new();
    let le32 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    le32(&mut b, 0x0a0d_0d0a);
    le32(&mut b, 28);
    le32(&mut b, 0x1a2b_3c4d);
    b.extend_from_slice(&[1, 0, 0, 0]);
    b.extend_from_slice(&(-1i64).to_le_bytes());
    le32(&mut b, 28);
    le32(&mut b, 1);
    le32(&mut b, 20);
    b.extend_from_slice(&[1, 0, 0, 0]);
    le32(&mut b, 4); // snaplen 4
    le32(&mut b, 20);
    le32(&mut b, 3);
    le32(&mut b, 24);
    le32(&mut b, 6); // original length 6
    b.extend_from_slice(&[9, 8, 7, 6, 5, 4, 0, 0]);
    le32(&mut b, 24);
    let recs = read_all(&b).unwrap();
    assert_eq!(recs[0].2, vec![9, 8, 7, 6], "cut to the interface snaplen");
}

#[test]
fn test_reader_skips_unknown_pcapng_blocks() {
    let mut b = sample_pcapng();
    // A custom block (type 0x00000BAD) after the SHB/IDBs.
    let mut custom = Vec::new();
    custom.extend_from_slice(&0x0000_0badu32.to_le_bytes());
    custom.extend_from_slice(&16u32.to_le_bytes());
    custom.extend_from_slice(&[1, 2, 3, 4]);
    custom.extend_from_slice(&16u32.to_le_bytes());
    b.splice(92..92, custom);
    assert_eq!(read_all(&b).unwrap().len(), 3);
}

#[test]
fn test_reader_io_error_reported_with_offset() {
    struct Failing(usize);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let good = sample_pcap();
            if self.0 >= 50 {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = buf.len().min(50 - self.0);
            buf[..n].copy_from_slice(&good[self.0..self.0 + n]);
            self.0 += n;
            Ok(n)
        }
    }
    let mut r = CaptureReader::new(Failing(0)).unwrap();
    let e = r.next_record().unwrap_err();
    assert!(e.to_string().contains("disk on fire"), "{e}");
    assert_eq!(e.offset, 50);
}

#[test]
fn test_writers_are_deterministic() {
    use tcplab_trace::synth::{write_bulk_pcap, BulkConfig};
    let cfg = BulkConfig {
        segments: 300,
        loss_every: 13,
        ..BulkConfig::default()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write_bulk_pcap(cfg, &mut a, 262_144).unwrap();
    write_bulk_pcap(cfg, &mut b, 262_144).unwrap();
    assert_eq!(a, b);
    assert_eq!(sample_pcapng(), sample_pcapng());
}

/// A little-endian pcapng: SHB, one IDB with `idb_options` (already padded, without the
/// end-of-options), one EPB of 3 bytes with raw timestamp `ts`.
fn pcapng_one_packet(linktype: u16, idb_options: &[u8], ts: u64) -> Vec<u8> {
    let mut b = Vec::new();
    let le32 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    le32(&mut b, 0x0a0d_0d0a);
    le32(&mut b, 28);
    le32(&mut b, 0x1a2b_3c4d);
    b.extend_from_slice(&[1, 0, 0, 0]);
    b.extend_from_slice(&(-1i64).to_le_bytes());
    le32(&mut b, 28);
    let idb_len = 20 + idb_options.len() as u32 + if idb_options.is_empty() { 0 } else { 4 };
    le32(&mut b, 1);
    le32(&mut b, idb_len);
    b.extend_from_slice(&linktype.to_le_bytes());
    b.extend_from_slice(&[0, 0]);
    le32(&mut b, 0);
    b.extend_from_slice(idb_options);
    if !idb_options.is_empty() {
        le32(&mut b, 0); // opt_endofopt
    }
    le32(&mut b, idb_len);
    le32(&mut b, 6);
    le32(&mut b, 36);
    le32(&mut b, 0);
    le32(&mut b, (ts >> 32) as u32);
    le32(&mut b, ts as u32);
    le32(&mut b, 3);
    le32(&mut b, 3);
    b.extend_from_slice(&[0x45, 0, 0, 0]);
    le32(&mut b, 36);
    b
}

#[test]
fn test_reader_pcapng_binary_tsresol_and_tsoffset() {
    // if_tsresol (9) = 0x80 | 20: units of 2^-20 s; if_tsoffset (14) = 5 s.
    let mut opts = vec![9, 0, 1, 0, 0x80 | 20, 0, 0, 0];
    opts.extend_from_slice(&[14, 0, 8, 0]);
    opts.extend_from_slice(&5i64.to_le_bytes());
    let recs = read_all(&pcapng_one_packet(101, &opts, 3 << 19)).unwrap();
    // 1.5 s plus the 5 s offset.
    assert_eq!((recs[0].0, recs[0].1), (6_500_000_000, 101));
}

#[test]
fn test_reader_pcapng_unsupported_tsresol_is_an_error_with_offset() {
    // 10^-12 s units: finer than nanoseconds, which the pcap-file crate does not decode.
    let opts = [9, 0, 1, 0, 12, 0, 0, 0];
    let e = read_all(&pcapng_one_packet(1, &opts, 1)).unwrap_err();
    assert_eq!(e.offset, 28, "the interface description block: {e}");
    assert!(e.to_string().contains("timestamp resolution"), "{e}");
}

#[test]
fn test_reader_pcapng_huge_block_length_is_corrupt_not_allocation() {
    let mut b = pcapng_one_packet(1, &[], 0);
    let epb = b.len() - 36;
    b[epb + 4..epb + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let e = read_all(&b).unwrap_err();
    assert_eq!(e.offset, epb as u64);
    assert!(matches!(e.kind, CaptureErrorKind::Corrupt(_)), "{e}");
}

#[test]
fn test_reader_record_larger_than_the_initial_buffer() {
    // 3 MiB of data in the middle record (the reader starts with a 1 MiB buffer); hand-built
    // because our writer cuts packets to its 256 KiB snap length.
    let big = vec![7u8; 3 << 20];
    let mut bytes = sample_pcap()[..24 + 76].to_vec();
    for v in [0u32, 2, big.len() as u32, big.len() as u32] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&big);
    bytes.extend_from_slice(&sample_pcap()[24 + 76..24 + 76 + 77]);
    let recs = read_all(&bytes).unwrap();
    let lens: Vec<_> = recs.iter().map(|r| r.2.len()).collect();
    assert_eq!(lens, vec![60, 3 << 20, 61]);
    assert!(recs[1].2 == big);
}

#[test]
fn test_reader_pcap_fcs_bits_masked_and_kuznetzov_refused() {
    let mut bytes = sample_pcap();
    // Link-type field: FCS-present flag and length in bits 28-31 (draft-ietf-opsawg-pcap §4).
    bytes[20..24].copy_from_slice(&0x3000_0001u32.to_le_bytes());
    assert_eq!(read_all(&bytes).unwrap()[0].1, linktype::ETHERNET);
    let mut k = sample_pcap();
    k[0..4].copy_from_slice(&0xa1b2_cd34u32.to_le_bytes());
    let e = read_all(&k).unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("editcap"), "{e}");
}
