//! Writes a synthetic bulk-transfer capture (see `tcplab_trace::synth`).
//!
//! `cargo run --example mkcap -- OUT.pcap [segments] [loss_every] [isn_a] [link] [ipv6] [snaplen]`
//! with link one of ethernet, sll, sll2, raw, null.

use std::io::BufWriter;
use tcplab_trace::pcap::LinkKind;
use tcplab_trace::synth::{write_bulk_pcap, BulkConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: mkcap OUT.pcap [segments] [loss_every] [isn_a] [link] [ipv6] [snaplen]");
        std::process::exit(2);
    }
    let num = |i: usize, d: u64| args.get(i).map_or(d, |s| s.parse().expect("a number"));
    let link = match args.get(5).map_or("ethernet", String::as_str) {
        "sll" => LinkKind::LinuxSll,
        "sll2" => LinkKind::LinuxSll2,
        "raw" => LinkKind::RawIp,
        "null" => LinkKind::Null,
        _ => LinkKind::Ethernet,
    };
    let cfg = BulkConfig {
        segments: num(2, 1000),
        loss_every: num(3, 100),
        isn_a: num(4, 0xfff0_0000) as u32,
        link,
        ipv6: num(6, 0) != 0,
        ..BulkConfig::default()
    };
    let f = std::fs::File::create(&args[1]).expect("create output");
    let n = write_bulk_pcap(cfg, BufWriter::new(f), num(7, 262_144) as u32).expect("write");
    println!("{n} packets");
}
