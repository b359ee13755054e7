//! Property tests: random and mutated input never panics the readers, parsers or analyzer;
//! emit/parse round-trips; analyzer invariants hold on random traffic.

use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr};
use tcplab_trace::analysis::{analyze_reader, Analyzer, AnalyzerConfig, Dir, SeriesSink};
use tcplab_trace::decode::{decode, TcpSegment};
use tcplab_trace::pcap::{linktype, CaptureReader, PcapngWriter};
use tcplab_trace::synth::{write_bulk_pcap, BulkConfig};
use tcplab_trace::wire::{TcpFlags, TcpOptions, TcpPacket, TcpRepr};

const LINKTYPES: [u32; 10] = [
    linktype::NULL,
    linktype::ETHERNET,
    linktype::RAW_12,
    linktype::RAW_14,
    linktype::RAW,
    linktype::LOOP,
    linktype::LINUX_SLL,
    linktype::IPV4,
    linktype::IPV6,
    linktype::LINUX_SLL2,
];

/// Reads every record; returns the number read or the error offset.
fn drain(bytes: &[u8]) -> Result<usize, u64> {
    let mut r = CaptureReader::new(bytes).map_err(|e| e.offset)?;
    let mut n = 0;
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                let _ = decode(rec.linktype, rec.data);
                n += 1;
            }
            Ok(None) => return Ok(n),
            Err(e) => return Err(e.offset),
        }
    }
}

fn small_synth() -> Vec<u8> {
    let mut v = Vec::new();
    let cfg = BulkConfig {
        segments: 40,
        loss_every: 7,
        ..BulkConfig::default()
    };
    write_bulk_pcap(cfg, &mut v, 200).unwrap();
    v
}

fn small_pcapng() -> Vec<u8> {
    let pcap = small_synth();
    let mut r = CaptureReader::new(&pcap[..]).unwrap();
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    let i0 = w.add_interface(linktype::ETHERNET, 0, 9).unwrap();
    let i1 = w.add_interface(linktype::ETHERNET, 128, 6).unwrap();
    let mut k = 0;
    while let Some(rec) = r.next_record().unwrap() {
        w.write_packet(if k % 2 == 0 { i0 } else { i1 }, rec.ts_ns, rec.data)
            .unwrap();
        k += 1;
    }
    w.into_inner().unwrap()
}

fn arb_segment() -> impl Strategy<Value = TcpSegment> {
    (
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        0u16..0x200,
        any::<u16>(),
        prop_oneof![Just(0u32), 0u32..3000, Just(1448u32)],
        proptest::option::of(0u8..20),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..5),
        any::<bool>(),
    )
        .prop_map(
            |(from_a, seq, ack, flags, window, len, ws, sacks, sackok)| {
                let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
                let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
                let mut options = TcpOptions {
                    window_scale: ws,
                    sack_permitted: sackok,
                    ..Default::default()
                };
                options.set_sack_blocks(&sacks);
                TcpSegment {
                    src: if from_a { a } else { b },
                    dst: if from_a { b } else { a },
                    tcp: TcpRepr {
                        src_port: if from_a { 1 } else { 2 },
                        dst_port: if from_a { 2 } else { 1 },
                        seq,
                        ack,
                        flags: TcpFlags(flags),
                        window,
                        urgent: 0,
                        options,
                    },
                    payload_len: len,
                    captured_payload_len: len,
                    ip_id: None,
                }
            },
        )
}

/// A segment near a running sequence position, so random traffic exercises retransmission,
/// out-of-order, SACK and window paths rather than only wild jumps.
/// (from A, seq step, ack offset, flags, window, length, SACK (offset, width) pairs).
type Nearby = (bool, i32, i32, u16, u16, u32, Vec<(i32, i32)>);

fn arb_nearby() -> impl Strategy<Value = Nearby> {
    (
        any::<bool>(),
        -5000i32..5000,
        -5000i32..5000,
        prop_oneof![
            Just(TcpFlags::ACK),
            Just(TcpFlags::ACK | TcpFlags::FIN),
            Just(TcpFlags::SYN),
            0u16..0x40
        ],
        prop_oneof![Just(0u16), any::<u16>()],
        prop_oneof![Just(0u32), 1u32..1500],
        proptest::collection::vec((-3000i32..6000, -100i32..3000), 0..4),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_bytes_never_panic_reader(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = drain(&bytes);
    }

    #[test]
    fn prop_random_bytes_after_valid_headers_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..600),
        ng in any::<bool>(),
    ) {
        let mut bytes = if ng { small_pcapng()[..92].to_vec() } else { small_synth()[..24].to_vec() };
        bytes.extend_from_slice(&tail);
        let _ = drain(&bytes);
    }

    #[test]
    fn prop_mutated_captures_never_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..12),
        cut in any::<usize>(),
        ng in any::<bool>(),
    ) {
        let mut bytes = if ng { small_pcapng() } else { small_synth() };
        for (at, x) in flips {
            let n = bytes.len();
            bytes[at % n] ^= x | 1;
        }
        let n = bytes.len();
        bytes.truncate(cut % (n + 1));
        if let Err(off) = drain(&bytes) {
            prop_assert!(off <= bytes.len() as u64);
        }
        let mut sink = SeriesSink::default();
        let _ = analyze_reader(&bytes[..], AnalyzerConfig::default(), &mut sink);
    }

    #[test]
    fn prop_decode_random_frames_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        for lt in LINKTYPES {
            let _ = decode(lt, &bytes);
        }
        // Force IPv4/IPv6 version nibbles so the IP and TCP paths are reached.
        let mut b = bytes.clone();
        if !b.is_empty() {
            b[0] = 0x45 | (b[0] & 0x0a);
            let _ = decode(linktype::RAW, &b);
            b[0] = 0x60;
            let _ = decode(linktype::RAW, &b);
        }
        let _ = TcpOptions::parse(&bytes);
        if let Ok(p) = TcpPacket::new_checked(&bytes[..]) {
            let _ = TcpRepr::parse(&p);
        }
    }

    #[test]
    fn prop_tcp_repr_emit_parse_roundtrip(
        seg in arb_segment(),
        mss in proptest::option::of(any::<u16>()),
        ts in proptest::option::of((any::<u32>(), any::<u32>())),
    ) {
        let mut r = seg.tcp;
        r.flags = TcpFlags(r.flags.0 & 0x1ff);
        r.options.mss = mss;
        r.options.timestamp = ts;
        let mut buf = vec![0u8; r.header_len()];
        r.emit(&mut TcpPacket::new_unchecked(&mut buf[..]));
        let back = TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap());
        let n = back.options.sack_blocks().len();
        prop_assert!(n <= r.options.sack_blocks().len());
        let mut want = r;
        want.options.set_sack_blocks(&r.options.sack_blocks()[..n]);
        prop_assert_eq!(back, want);
        prop_assert!(r.header_len() <= 60);
    }

    #[test]
    fn prop_analyzer_random_segments_invariants(segs in proptest::collection::vec(arb_segment(), 1..200)) {
        let mut a = Analyzer::new(AnalyzerConfig::default());
        let mut sink = SeriesSink::default();
        for (i, s) in segs.iter().enumerate() {
            a.feed_segment(i as u64 * 1000, s, &mut sink);
        }
        check_invariants(&a.finish());
    }

    #[test]
    fn prop_analyzer_nearby_traffic_invariants(
        steps in proptest::collection::vec(arb_nearby(), 1..300),
        isn in any::<u32>(),
    ) {
        let a_ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let b_ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let mut an = Analyzer::new(AnalyzerConfig::default());
        let mut sink = SeriesSink::default();
        let mut pos: i64 = 0;
        for (i, (from_a, dseq, dack, flags, window, len, sacks)) in steps.into_iter().enumerate() {
            pos += i64::from(dseq.max(0));
            let seq = isn.wrapping_add((pos + i64::from(dseq)) as u32);
            let ack = isn.wrapping_add((pos + i64::from(dack)) as u32);
            let mut options = TcpOptions::default();
            let blocks: Vec<(u32, u32)> = sacks
                .iter()
                .map(|&(l, w)| (isn.wrapping_add((pos + i64::from(l)) as u32), isn.wrapping_add((pos + i64::from(l) + i64::from(w)) as u32)))
                .collect();
            options.set_sack_blocks(&blocks);
            let seg = TcpSegment {
                src: if from_a { a_ip } else { b_ip },
                dst: if from_a { b_ip } else { a_ip },
                tcp: TcpRepr {
                    src_port: if from_a { 1 } else { 2 },
                    dst_port: if from_a { 2 } else { 1 },
                    seq: if from_a { seq } else { 77 },
                    ack: if from_a { 78 } else { ack },
                    flags: TcpFlags(flags),
                    window,
                    urgent: 0,
                    options,
                },
                payload_len: if from_a { len } else { 0 },
                captured_payload_len: 0,
                ip_id: None,
            };
            an.feed_segment(i as u64 * 1_000_000, &seg, &mut sink);
        }
        check_invariants(&an.finish());
    }
}

fn check_invariants(rep: &tcplab_trace::analysis::Report) {
    for c in &rep.connections {
        let mut pk = 0;
        for d in [Dir::AtoB, Dir::BtoA] {
            let s = c.stats(d);
            pk += s.packets;
            assert!(s.data_pkts <= s.packets);
            assert!(s.unique_bytes <= s.data_bytes, "{s:?}");
            assert!(s.rexmt_pkts <= s.packets);
            assert!(s.pure_acks <= s.ack_pkts);
            assert!(s.invalid_sack_blocks <= s.sack_blocks);
            assert_eq!(
                s.invalid_sack_blocks,
                s.invalid_sack_reversed
                    + s.invalid_sack_below_ack
                    + s.invalid_sack_beyond_sent
                    + s.invalid_sack_unsent
            );
            assert!(s.window_violations <= s.data_pkts);
            if s.rtt.samples > 0 {
                assert!(s.rtt.min_ns <= s.rtt.max_ns);
                let m = s.rtt.mean_ns().unwrap();
                assert!(m >= s.rtt.min_ns as f64 - 1.0 && m <= s.rtt.max_ns as f64 + 1.0);
            }
            assert!(s.win_avg.is_finite());
        }
        assert_eq!(pk, c.packets);
    }
}
