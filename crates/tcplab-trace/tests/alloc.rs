//! The capture writing path allocates nothing per packet: frames built by `emit_tcp_ipv4` into a
//! reused buffer, written by `PcapWriter` (what the simulator does per captured packet) and by
//! `PcapngWriter`. Counted with a counting global allocator (crate `tcplab-testalloc`) after a
//! warm-up, into an `io::sink`.
//! This is the condition for writing through the pcap-file crate (src/pcap/writer.rs).
//! Only this test lives in this binary, so no other thread allocates while it counts.

use std::net::Ipv4Addr;
use tcplab_testalloc::allocations;
use tcplab_trace::pcap::{emit_tcp_ipv4, PcapWriter, PcapngWriter, TcpPacketRepr};
use tcplab_trace::wire::{EthernetAddress, TcpFlags, TcpOptions, TcpRepr};

#[global_allocator]
static A: tcplab_testalloc::Counting = tcplab_testalloc::Counting;

fn repr(i: u32) -> TcpPacketRepr<'static> {
    let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 1, 1));
    let mut options = TcpOptions {
        timestamp: Some((i, i / 2)),
        ..TcpOptions::default()
    };
    options.set_sack_blocks(&[(i, i + 1448)]);
    TcpPacketRepr {
        src_mac: EthernetAddress::from_ipv4(src),
        dst_mac: EthernetAddress::from_ipv4(dst),
        src_addr: src,
        dst_addr: dst,
        ttl: 64,
        ident: i as u16,
        dscp_ecn: 0,
        tcp: TcpRepr {
            src_port: 40000,
            dst_port: 5001,
            seq: i.wrapping_mul(1448),
            ack: 1,
            flags: TcpFlags(TcpFlags::ACK),
            window: 1000,
            urgent: 0,
            options,
        },
        payload_len: 1448,
        payload: &[],
    }
}

#[test]
fn test_capture_writers_allocate_nothing_per_packet() {
    let mut buf = Vec::with_capacity(2048);
    let mut pcap = PcapWriter::with_options(std::io::sink(), 1, 128).unwrap();
    let mut ng = PcapngWriter::new(std::io::sink()).unwrap();
    let iface = ng.add_interface(1, 128, 9).unwrap();
    let mut write = |i: u32| {
        emit_tcp_ipv4(&mut buf, &repr(i));
        pcap.write_packet(u64::from(i) * 12_000, &buf).unwrap();
        ng.write_packet(iface, u64::from(i) * 12_000, &buf).unwrap();
    };
    for i in 0..1000 {
        write(i);
    }
    let before = allocations();
    let n = 200_000;
    for i in 1000..1000 + n {
        write(i);
    }
    let allocs = allocations() - before;
    assert_eq!(
        allocs, 0,
        "{allocs} allocations for {n} packets in two formats"
    );
}
