//! Packet traces for tcplab.
//!
//! * [`wire`]: Ethernet II, Linux cooked (SLL, SLL2), IPv4, IPv6, TCP (all options), UDP as
//!   zero-copy views plus parsed `Repr`s with `parse`/`emit` (smoltcp's pattern).
//! * [`pcap`]: a streaming reader for pcap and pcapng over any `Read`, writers for both (the
//!   containers through the `pcap-file` crate), and [`pcap::emit_tcp_ipv4`] /
//!   [`pcap::emit_udp_ipv4`], the per-packet frame builders the simulator uses when a capture
//!   is asked for.
//! * [`decode`]: from a captured frame to the TCP segment it carries (with [`wire`], not
//!   etherparse: its module docs say why).
//! * [`analysis`]: a streaming, tcptrace-compatible per-connection analyzer with the anomaly
//!   checks the studies needed (data beyond the advertised window, invalid SACK blocks,
//!   zero-window probes) and time-sequence graph data; [`analysis::timestamps`] gives the TCP
//!   timestamp option values of every segment per connection of the report (the timestamp-echo
//!   RTT of python/tcplab/identify/tsrtt.py pairs them).
//! * [`report`]: the analysis result as a plain value tree (JSON, Python dict).
//! * [`synth`]: deterministic synthetic bulk transfers (benchmarks, tests, fuzz seeds).
//!
//! No clock is read and no randomness is used: the same packets give the same bytes.
//!
//! ```
//! use tcplab_trace::pcap::{emit_tcp_ipv4, PcapWriter, TcpPacketRepr};
//! use tcplab_trace::wire::{EthernetAddress, TcpFlags, TcpOptions, TcpRepr};
//! use std::net::Ipv4Addr;
//!
//! let mut w = PcapWriter::new(Vec::new()).unwrap();
//! let mut buf = Vec::with_capacity(2048); // reused for every packet
//! let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 1, 1));
//! let repr = TcpPacketRepr {
//!     src_mac: EthernetAddress::from_ipv4(src),
//!     dst_mac: EthernetAddress::from_ipv4(dst),
//!     src_addr: src,
//!     dst_addr: dst,
//!     ttl: 64,
//!     ident: 0,
//!     dscp_ecn: 0,
//!     tcp: TcpRepr {
//!         src_port: 40000,
//!         dst_port: 5001,
//!         seq: 1,
//!         ack: 1,
//!         flags: TcpFlags(TcpFlags::ACK),
//!         window: 1000,
//!         urgent: 0,
//!         options: TcpOptions::default(),
//!     },
//!     payload_len: 1448,
//!     payload: &[],
//! };
//! emit_tcp_ipv4(&mut buf, &repr);
//! w.write_packet(1_000_000, &buf).unwrap();
//! let file = w.into_inner().unwrap();
//! let rep = tcplab_trace::analysis::analyze_reader(
//!     &file[..],
//!     Default::default(),
//!     &mut tcplab_trace::analysis::NoSink,
//! )
//! .unwrap();
//! assert_eq!(rep.connections[0].stats(tcplab_trace::analysis::Dir::AtoB).data_bytes, 1448);
//! ```

pub mod analysis;
pub mod decode;
pub mod pcap;
pub mod report;
pub mod synth;
pub mod wire;
