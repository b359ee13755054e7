//! Writes the simulator's packet captures as pcap files (docs/design.md; issue "packet traces").
//! The engine hands packets to a [`PacketTap`]; this tap turns each into Ethernet + IPv4 +
//! TCP/UDP bytes with `tcplab-trace` and appends it to the capture's file. Addresses are derived
//! from node ids (host `i` is 10.(i>>8).(i&255).1 … stable per topology), ports from flow ids
//! (client 40000 + flow, server 5201, iperf3's port). Packets are stored truncated to
//! `SNAPLEN` bytes (headers; the simulator carries no payload), as `tcpdump -s 128` would, so a
//! capture of millions of packets stays small. Deterministic: no wall-clock timestamps.

use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;

use tcplab_sim::net::Channel;
use tcplab_sim::packet::{flags, opts, Packet, Proto};
use tcplab_sim::sim::PacketTap;
use tcplab_sim::Config;
use tcplab_trace::pcap::{
    emit_tcp_ipv4, emit_udp_ipv4, linktype, PcapWriter, TcpPacketRepr, UdpPacketRepr,
};
use tcplab_trace::wire::ethernet::EthernetAddress;
use tcplab_trace::wire::tcp::{TcpFlags, TcpOptions, TcpRepr};

/// Bytes of each packet kept in the file.
pub const SNAPLEN: u32 = 128;

/// Port of the data receiver (iperf3's default).
const SERVER_PORT: u16 = 5201;

pub fn node_addr(node: u16) -> Ipv4Addr {
    Ipv4Addr::new(10, (node >> 8) as u8, (node & 0xff) as u8, 1)
}

pub struct PcapTap {
    writers: Vec<PcapWriter<BufWriter<File>>>,
    buf: Vec<u8>,
    /// Flow index → whether the flow's sender is the packet's `src` (to choose ports).
    flow_src: Vec<u16>,
    pub error: Option<String>,
}

impl PcapTap {
    /// Open one file per capture that has a path.
    pub fn open(cfg: &Config, flow_src: Vec<u16>) -> std::io::Result<PcapTap> {
        let mut writers = Vec::new();
        for c in &cfg.capture {
            let path = c.path.as_deref().unwrap_or("capture.pcap");
            let f = BufWriter::with_capacity(1 << 20, File::create(path)?);
            writers.push(PcapWriter::with_options(f, linktype::ETHERNET, SNAPLEN)?);
        }
        Ok(PcapTap {
            writers,
            buf: Vec::with_capacity(2048),
            flow_src,
            error: None,
        })
    }
}

impl PacketTap for PcapTap {
    fn on_packet(&mut self, capture: usize, _channel: &Channel, ts: u64, p: &Packet) {
        let (sa, da) = (node_addr(p.src), node_addr(p.dst));
        let from_client = self.flow_src.get(p.flow as usize) == Some(&p.src);
        let client_port = 40000 + (p.flow % 20000) as u16;
        let (sp, dp) = if from_client {
            (client_port, SERVER_PORT)
        } else {
            (SERVER_PORT, client_port)
        };
        let mac = (
            EthernetAddress::from_ipv4(sa),
            EthernetAddress::from_ipv4(da),
        );
        let n = match p.proto {
            Proto::Tcp => {
                let h = &p.tcp;
                let mut o = TcpOptions::default();
                if h.opts & opts::MSS != 0 && h.flags & flags::SYN != 0 {
                    o.mss = Some(h.mss);
                }
                if h.opts & opts::WSCALE != 0 && h.flags & flags::SYN != 0 {
                    o.window_scale = Some(h.wscale);
                }
                o.sack_permitted = h.opts & opts::SACK_PERM != 0 && h.flags & flags::SYN != 0;
                if h.opts & opts::TS != 0 {
                    o.timestamp = Some((h.ts_val, h.ts_ecr));
                }
                o.set_sack_blocks(&h.sack[..h.n_sack as usize]);
                let tcp = TcpRepr {
                    src_port: sp,
                    dst_port: dp,
                    seq: h.seq,
                    ack: if h.flags & flags::ACK != 0 { h.ack } else { 0 },
                    flags: TcpFlags(h.flags as u16),
                    window: h.wnd,
                    urgent: 0,
                    options: o,
                };
                let repr = TcpPacketRepr {
                    src_mac: mac.0,
                    dst_mac: mac.1,
                    src_addr: sa,
                    dst_addr: da,
                    ttl: 64,
                    ident: 0,
                    dscp_ecn: 0,
                    tcp,
                    payload_len: p.payload as usize,
                    payload: &[],
                };
                emit_tcp_ipv4(&mut self.buf, &repr)
            }
            Proto::Udp => {
                let repr = UdpPacketRepr {
                    src_mac: mac.0,
                    dst_mac: mac.1,
                    src_addr: sa,
                    dst_addr: da,
                    ttl: 64,
                    ident: 0,
                    dscp_ecn: 0,
                    src_port: sp,
                    dst_port: dp,
                    payload_len: p.payload as usize,
                    payload: &[],
                };
                emit_udp_ipv4(&mut self.buf, &repr)
            }
        };
        if let Some(w) = self.writers.get_mut(capture) {
            if let Err(e) = w.write_packet(ts, &self.buf[..n]) {
                self.error.get_or_insert_with(|| e.to_string());
            }
        }
    }

    fn close(&mut self) -> Result<(), String> {
        for w in &mut self.writers {
            w.flush().map_err(|e| e.to_string())?;
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
