//! Analyzer behaviour on synthetic transfers with known answers and on hand-built edge cases.

use std::net::{IpAddr, Ipv4Addr};
use tcplab_trace::analysis::{
    analyze_reader, Analyzer, AnalyzerConfig, Dir, NoSink, SegKind, SeriesSink,
};
use tcplab_trace::decode::TcpSegment;
use tcplab_trace::pcap::LinkKind;
use tcplab_trace::synth::{write_bulk_pcap, BulkConfig, BulkTransfer};
use tcplab_trace::wire::{TcpFlags, TcpOptions, TcpRepr};

const A: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
const B: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));
const SYN: u16 = TcpFlags::SYN;
const ACK: u16 = TcpFlags::ACK;
const FIN: u16 = TcpFlags::FIN;
const RST: u16 = TcpFlags::RST;

/// A hand-built segment from A (or B) to the other.
fn seg(from_a: bool, flags: u16, seq: u32, ack: u32, win: u16, len: u32) -> TcpSegment {
    let (src, dst, sp, dp) = if from_a {
        (A, B, 1111, 80)
    } else {
        (B, A, 80, 1111)
    };
    TcpSegment {
        src,
        dst,
        tcp: TcpRepr {
            src_port: sp,
            dst_port: dp,
            seq,
            ack,
            flags: TcpFlags(flags),
            window: win,
            urgent: 0,
            options: TcpOptions::default(),
        },
        payload_len: len,
        captured_payload_len: len,
        ip_id: None,
    }
}

fn with_ws(mut s: TcpSegment, ws: u8) -> TcpSegment {
    s.tcp.options.window_scale = Some(ws);
    s.tcp.options.sack_permitted = true;
    s
}

fn with_sack(mut s: TcpSegment, blocks: &[(u32, u32)]) -> TcpSegment {
    s.tcp.options.set_sack_blocks(blocks);
    s
}

/// Feeds (time in ms, segment) pairs; returns the analyzer and the series.
fn run(pkts: &[(u64, TcpSegment)]) -> (tcplab_trace::analysis::Report, SeriesSink) {
    let mut a = Analyzer::new(AnalyzerConfig::default());
    let mut sink = SeriesSink::default();
    for (t, s) in pkts {
        a.feed_segment(t * 1_000_000, s, &mut sink);
    }
    (a.finish(), sink)
}

/// Handshake with window scaling 2 on both sides, ISNs 1000 (A) and 5000 (B).
fn handshake() -> Vec<(u64, TcpSegment)> {
    vec![
        (0, with_ws(seg(true, SYN, 1000, 0, 65535, 0), 2)),
        (10, with_ws(seg(false, SYN | ACK, 5000, 1001, 65535, 0), 2)),
        (20, seg(true, ACK, 1001, 5001, 1000, 0)),
    ]
}

fn synth_report(cfg: BulkConfig) -> tcplab_trace::analysis::Report {
    let mut file = Vec::new();
    write_bulk_pcap(cfg, &mut file, 128).unwrap();
    analyze_reader(&file[..], AnalyzerConfig::default(), &mut NoSink).unwrap()
}

#[test]
fn test_synth_bulk_counts_exact() {
    let cfg = BulkConfig {
        segments: 3000,
        loss_every: 50,
        ..BulkConfig::default()
    };
    let rep = synth_report(cfg);
    assert_eq!(rep.connections.len(), 1);
    let c = &rep.connections[0];
    assert!(c.complete());
    let s = c.stats(Dir::AtoB);
    let losses = BulkTransfer::expected_losses(&cfg);
    assert_eq!(losses, 60);
    assert_eq!(s.unique_bytes, 3000 * 1448);
    assert_eq!(s.rexmt_pkts, losses);
    assert_eq!(s.rexmt_bytes, losses * 1448);
    assert_eq!(s.data_pkts, 3000 + losses);
    assert_eq!(
        s.truncated_pkts, s.data_pkts,
        "snaplen 128 cuts every data packet"
    );
    assert_eq!(s.seq_span, 3000 * 1448 + 2, "SYN and FIN occupy one each");
    assert_eq!((s.rtt.min_ns, s.rtt.max_ns), (20_000_000, 20_000_000));
    let r = c.stats(Dir::BtoA);
    assert_eq!(r.invalid_sack_blocks, 0);
    assert!(r.sack_pkts > 0);
    assert_eq!(s.mss, Some(1448));
    assert_eq!(s.window_scale, Some(7));
}

#[test]
fn test_synth_wrap_and_link_types_agree() {
    let base = BulkConfig {
        segments: 4000,
        loss_every: 37,
        ..BulkConfig::default()
    };
    let reference = synth_report(BulkConfig { isn_a: 77, ..base });
    let want = reference.connections[0].stats(Dir::AtoB).clone();
    for (isn, link, v6) in [
        (u32::MAX - 5000, LinkKind::Ethernet, false),
        (u32::MAX, LinkKind::LinuxSll, true),
        (u32::MAX - 1448 * 2000, LinkKind::LinuxSll2, false),
        (0x8000_0000, LinkKind::RawIp, true),
        (u32::MAX - 3, LinkKind::Null, false),
    ] {
        let rep = synth_report(BulkConfig {
            isn_a: isn,
            link,
            ipv6: v6,
            ..base
        });
        let got = rep.connections[0].stats(Dir::AtoB);
        let ctx = format!("isn {isn} {link:?} v6={v6}");
        assert_eq!(got.unique_bytes, want.unique_bytes, "{ctx}");
        assert_eq!(got.rexmt_pkts, want.rexmt_pkts, "{ctx}");
        assert_eq!(got.out_of_order_pkts, 0, "{ctx}");
        // With ISN 2^32 - 1 the SYN is acknowledged by ACK number 0, a tcptrace quadrant
        // boundary: no RTT sample for it (tcptrace agrees, see seqspace.rs).
        let boundary = u64::from(isn.wrapping_add(1) % (1 << 30) == 0);
        assert_eq!(got.rtt.samples, want.rtt.samples - boundary, "{ctx}");
        assert_eq!(got.dup_acks, want.dup_acks, "{ctx}");
        assert_eq!(got.seq_span, want.seq_span, "{ctx}");
        assert_eq!(
            rep.connections[0].stats(Dir::BtoA).invalid_sack_blocks,
            0,
            "{ctx}"
        );
    }
}

#[test]
fn test_window_violation_counted_and_probe_allowed() {
    let mut p = handshake();
    // B advertises 1000 << 2 = 4000 bytes from ack 1001: right edge 5001.
    p.push((30, seg(false, ACK, 5001, 1001, 1000, 0)));
    p.push((31, seg(true, ACK, 1001, 5001, 1000, 3000)));
    p.push((32, seg(true, ACK, 4001, 5001, 1000, 1000))); // ends at 5001: allowed
    p.push((33, seg(true, ACK, 5001, 5001, 1000, 500))); // beyond: violation of 500 bytes
                                                         // B closes the window: ack 5501, window 0.
    p.push((40, seg(false, ACK, 5001, 5501, 0, 0)));
    p.push((50, seg(true, ACK, 5501, 5001, 1000, 1))); // 1-byte probe: allowed, a probe
    p.push((51, seg(true, ACK, 5501, 5001, 1000, 2))); // more than a probe, still a probe to tcptrace
    let (rep, sink) = run(&p);
    let s = rep.connections[0].stats(Dir::AtoB);
    assert!(s.window_checked);
    assert_eq!(s.window_violations, 2);
    // The 2-byte segment repeats the probe's byte: one new byte beyond the edge.
    assert_eq!(s.window_violation_bytes, 500 + 1);
    assert_eq!((s.zwnd_probe_pkts, s.zwnd_probe_bytes), (2, 3));
    let kinds = &sink.series[0][Dir::AtoB.index()].seg_kind;
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == SegKind::WindowViolation)
            .count(),
        2
    );
    assert!(kinds.contains(&SegKind::ZeroWindowProbe));
}

#[test]
fn test_window_unknown_without_syns_is_not_checked() {
    let p = vec![
        (0, seg(false, ACK, 5001, 1001, 10, 0)),
        (1, seg(true, ACK, 1001, 5001, 1000, 5000)),
    ];
    let (rep, _) = run(&p);
    let s = rep.connections[0].stats(Dir::BtoA);
    assert!(!s.window_checked);
    assert_eq!(rep.connections[0].stats(Dir::AtoB).window_violations, 0);
    // The first packet's sender is "a".
    assert_eq!(rep.connections[0].a.ip(), B);
}

#[test]
fn test_window_shrink_blames_only_new_data_after_it() {
    let mut p = handshake();
    p.push((30, seg(false, ACK, 5001, 1001, 1000, 0))); // edge 5001
    p.push((31, seg(true, ACK, 1001, 5001, 1000, 4000))); // fills the window
    p.push((32, seg(false, ACK, 5001, 1001, 500, 0))); // shrinks to 3001 (RFC 9293 §3.8.6)
    p.push((33, seg(true, ACK, 1001, 5001, 1000, 4000))); // retransmission: not checked
    p.push((36, seg(true, ACK, 5001, 5001, 1000, 100))); // new data beyond 3001
    let (rep, sink) = run(&p);
    let s = rep.connections[0].stats(Dir::AtoB);
    assert_eq!((s.window_violations, s.window_violation_bytes), (1, 100));
    let kinds = &sink.series[0][Dir::AtoB.index()].seg_kind;
    assert_eq!(kinds.last(), Some(&SegKind::WindowViolation));
    assert_eq!(kinds[kinds.len() - 2], SegKind::Retransmission);
}

#[test]
fn test_window_update_from_older_ack_ignored() {
    let mut p = handshake();
    p.push((30, seg(false, ACK, 5001, 3001, 1000, 0))); // edge 7001
    p.push((31, seg(false, ACK, 5001, 2001, 2000, 0))); // older ACK, bigger edge 10001: ignored
    p.push((32, seg(true, ACK, 1001, 5001, 1000, 7000))); // ends at 8001 > 7001
    let (rep, _) = run(&p);
    assert_eq!(
        rep.connections[0].stats(Dir::AtoB).window_violation_bytes,
        1000
    );
}

#[test]
fn test_invalid_sack_blocks_classified() {
    let mut p = handshake();
    p.push((30, seg(true, ACK, 1001, 5001, 1000, 1000))); // 1001..2001
    p.push((31, seg(true, ACK, 3001, 5001, 1000, 1000))); // 3001..4001 (2001..3001 never sent)
    let ack =
        |t, blocks: &[(u32, u32)]| (t, with_sack(seg(false, ACK, 5001, 2001, 5000, 0), blocks));
    p.push(ack(40, &[(3001, 4001)])); // valid
    p.push(ack(41, &[(4001, 3001)])); // reversed
    p.push(ack(42, &[(1001, 2001)])); // first block below ACK: a D-SACK, valid
    p.push(ack(43, &[(3001, 4001), (1001, 1501)])); // second block below ACK: invalid
    p.push(ack(44, &[(3001, 9001)])); // beyond anything sent
    p.push(ack(45, &[(2001, 4001)])); // covers 2001..3001, never sent
    p.push(ack(46, &[(3001, 3501), (3001, 4001)])); // D-SACK inside the second: valid
    let (rep, sink) = run(&p);
    let r = rep.connections[0].stats(Dir::BtoA);
    assert_eq!(r.invalid_sack_reversed, 1);
    assert_eq!(r.invalid_sack_below_ack, 1);
    assert_eq!(r.invalid_sack_beyond_sent, 1);
    assert_eq!(r.invalid_sack_unsent, 1);
    assert_eq!(r.invalid_sack_blocks, 4);
    assert_eq!(r.dsack_pkts, 2);
    assert_eq!(r.sack_pkts, 7);
    assert_eq!(r.sack_blocks, 9);
    let s = &sink.series[0][Dir::AtoB.index()];
    assert_eq!(s.sack_valid.iter().filter(|v| !**v).count(), 4);
    // Relative sequence numbers: A's SYN is 0, so byte 3001 is 2001.
    assert_eq!((s.sack_left[0], s.sack_right[0]), (2001, 3001));
}

#[test]
fn test_rst_packets_skip_window_stats() {
    let mut p = handshake();
    p.push((30, seg(false, RST | ACK, 5001, 1001, 0, 0)));
    let (rep, _) = run(&p);
    let s = rep.connections[0].stats(Dir::BtoA);
    assert_eq!((s.rst_pkts, s.ack_pkts, s.win_zero_adv), (1, 2, 0));
    assert!(rep.connections[0].reset());
}

#[test]
fn test_new_connection_on_port_reuse_after_fin() {
    let mut p = handshake();
    p.push((30, seg(true, FIN | ACK, 1001, 5001, 1000, 0)));
    p.push((31, seg(false, FIN | ACK, 5001, 1002, 1000, 0)));
    p.push((32, seg(true, ACK, 1002, 5002, 1000, 0)));
    // Same ports, new ISN far beyond the old window: a new connection.
    p.push((40, with_ws(seg(true, SYN, 900_000_000, 0, 65535, 0), 2)));
    p.push((
        41,
        with_ws(seg(false, SYN | ACK, 7000, 900_000_001, 65535, 0), 2),
    ));
    let (rep, _) = run(&p);
    assert_eq!(rep.connections.len(), 2);
    assert!(rep.connections[0].complete());
    assert_eq!(
        rep.connections[1].stats(Dir::AtoB).initial_seq,
        Some(900_000_000)
    );
    assert_eq!(rep.connections[1].packets, 2);
}

#[test]
fn test_idle_gap_starts_new_connection() {
    let mut a = Analyzer::new(AnalyzerConfig {
        new_conn_idle_ns: 1_000_000_000,
        ..Default::default()
    });
    a.feed_segment(0, &seg(true, ACK, 1, 1, 1, 10), &mut NoSink);
    a.feed_segment(500_000_000, &seg(true, ACK, 11, 1, 1, 10), &mut NoSink);
    a.feed_segment(2_000_000_000, &seg(true, ACK, 21, 1, 1, 10), &mut NoSink);
    assert_eq!(a.finish().connections.len(), 2);
}

#[test]
fn test_time_window_filters_series_not_stats() {
    let cfg = BulkConfig {
        segments: 2000,
        loss_every: 0,
        ..BulkConfig::default()
    };
    let mut file = Vec::new();
    write_bulk_pcap(cfg, &mut file, 96).unwrap();
    let mut all = SeriesSink::default();
    let full = analyze_reader(&file[..], AnalyzerConfig::default(), &mut all).unwrap();
    let win = AnalyzerConfig {
        tsg_from_ns: Some(100_000_000),
        tsg_to_ns: Some(150_000_000),
        ..Default::default()
    };
    let mut part = SeriesSink::default();
    let rep = analyze_reader(&file[..], win, &mut part).unwrap();
    assert_eq!(
        rep.connections[0].stats(Dir::AtoB),
        full.connections[0].stats(Dir::AtoB)
    );
    let s = &part.series[0][0];
    assert!(!s.seg_t_ns.is_empty());
    assert!(s
        .seg_t_ns
        .iter()
        .all(|&t| (100_000_000..=150_000_000).contains(&t)));
    assert!(s
        .ack_t_ns
        .iter()
        .all(|&t| (100_000_000..=150_000_000).contains(&t)));
    assert!(s.seg_t_ns.len() < all.series[0][0].seg_t_ns.len() / 2);
}

#[test]
fn test_series_ack_line_and_rtt_relative() {
    let mut p = handshake();
    p.push((30, seg(true, ACK, 1001, 5001, 1000, 100)));
    p.push((70, seg(false, ACK, 5001, 1101, 1000, 0)));
    let (_, sink) = run(&p);
    let s = &sink.series[0][Dir::AtoB.index()];
    assert_eq!(
        s.seg_start,
        vec![0, 1],
        "SYN at 0, the ACK-only handshake packet is not drawn"
    );
    assert_eq!(s.seg_kind[0], SegKind::Syn);
    assert_eq!(*s.ack.last().unwrap(), 101);
    assert_eq!(*s.win_edge.last().unwrap(), 101 + 4000);
    assert_eq!(*s.rtt_ns.last().unwrap(), 40_000_000);
}

#[test]
fn test_memory_follows_outstanding_data_not_packets() {
    let cfg = BulkConfig {
        segments: 200_000,
        loss_every: 97,
        ..BulkConfig::default()
    };
    let mut g = BulkTransfer::new(cfg);
    let mut a = Analyzer::new(AnalyzerConfig::default());
    let mut buf = Vec::new();
    let mut peak = 0;
    let mut n = 0u64;
    while let Some((ts, f)) = g.next_packet() {
        tcplab_trace::pcap::emit_tcp_frame(&mut buf, &f).unwrap();
        let rec = tcplab_trace::pcap::CaptureRecord {
            ts_ns: ts,
            linktype: 1,
            interface: 0,
            orig_len: buf.len() as u32,
            data: &buf,
            offset: 0,
        };
        a.feed_record(&rec, &mut NoSink);
        n += 1;
        if n.is_multiple_of(1000) {
            peak = peak.max(a.tracked_ranges());
            if n == 50000 {
                a.debug_dump();
            }
        }
    }
    // In flight: RTT 20 ms / 120 µs per segment ≈ 167 segments plus the ranges of a loss.
    assert!(peak < 600, "peak ranges {peak} for {n} packets");
    assert!(n > 400_000);
}
