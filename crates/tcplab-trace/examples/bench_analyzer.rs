//! Throughput of the capture reader and the analyzer on a synthetic capture of ≥ 2 million
//! packets written to a temporary file (SACK bulk transfer with losses and a sequence wrap,
//! snaplen 96 like `tcpdump -s 96`).
//!
//! `cargo run --release --example bench_analyzer -- [packets]`
//!
//! Prints packets per second; makes no assertion about speed.

// Measuring wall time is the point of this program; it is not simulation code.
#![allow(clippy::disallowed_methods)]

use std::io::{BufWriter, Write};
use std::time::Instant;
use tcplab_trace::analysis::{analyze_path, AnalyzerConfig, Dir, NoSink, SeriesSink};
use tcplab_trace::pcap::CaptureReader;
use tcplab_trace::synth::{write_bulk_pcap, BulkConfig};

fn main() {
    let want: u64 = std::env::args()
        .nth(1)
        .map_or(2_000_000, |s| s.parse().expect("packets"));
    // About two packets (data + ACK) per segment.
    let cfg = BulkConfig {
        segments: want / 2 + 1000,
        loss_every: 211,
        isn_a: 0xf000_0000,
        gap_ns: 12_000,
        ..BulkConfig::default()
    };
    let path = std::env::temp_dir().join(format!("tcplab-bench-{}.pcap", std::process::id()));

    let t = Instant::now();
    let f = std::fs::File::create(&path).expect("create temp file");
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let n = write_bulk_pcap(cfg, &mut w, 96).expect("write capture");
    w.flush().expect("flush");
    drop(w);
    let gen_s = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "capture: {n} packets, {:.1} MB, written in {gen_s:.2} s ({:.0} packets/s)",
        size as f64 / 1e6,
        n as f64 / gen_s
    );

    let t = Instant::now();
    let mut r = CaptureReader::new(std::fs::File::open(&path).expect("open")).expect("header");
    let mut k = 0u64;
    while r.next_record().expect("record").is_some() {
        k += 1;
    }
    let read_s = t.elapsed().as_secs_f64();
    println!(
        "read only:        {:>12.0} packets/s ({k} packets in {read_s:.2} s)",
        k as f64 / read_s
    );

    let t = Instant::now();
    let rep = analyze_path(&path, AnalyzerConfig::default(), &mut NoSink).expect("analyze");
    let an_s = t.elapsed().as_secs_f64();
    println!(
        "analyze (stats):  {:>12.0} packets/s ({an_s:.2} s)",
        n as f64 / an_s
    );

    let t = Instant::now();
    let mut sink = SeriesSink::default();
    let cfg_w = AnalyzerConfig {
        tsg_from_ns: Some(1_000_000_000),
        tsg_to_ns: Some(2_000_000_000),
        ..Default::default()
    };
    let _ = analyze_path(&path, cfg_w, &mut sink).expect("analyze");
    let tsg_s = t.elapsed().as_secs_f64();
    println!(
        "analyze + graph data for a 1 s window: {:>8.0} packets/s ({tsg_s:.2} s)",
        n as f64 / tsg_s
    );

    let s = rep.connections[0].stats(Dir::AtoB);
    println!(
        "check: unique {} bytes (expected {}), retransmitted {} segments, RTT samples {}",
        s.unique_bytes,
        cfg.segments * u64::from(cfg.mss),
        s.rexmt_pkts,
        s.rtt.samples
    );
    let _ = std::fs::remove_file(&path);
}
