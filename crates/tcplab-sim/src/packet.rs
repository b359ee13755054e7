//! Compact packet records. A packet is a plain `Copy` value (no heap); on the network it sits in
//! the pool of `net::PacketPool` and links move its handle.

/// TCP header flags (RFC 9293 §3.1).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// Which TCP options a segment carries (bit set).
pub mod opts {
    pub const MSS: u8 = 0x01;
    pub const WSCALE: u8 = 0x02;
    pub const SACK_PERM: u8 = 0x04;
    pub const TS: u8 = 0x08;
}

pub const IPV4_HEADER: u32 = 20;
pub const TCP_HEADER: u32 = 20;
pub const UDP_HEADER: u32 = 8;
/// Timestamps option as Linux sends it: NOP NOP TS(10) (RFC 7323 Appendix A layout).
pub const TS_OPTION_LEN: u32 = 12;
/// SYN options, padded: MSS(4) SACK-perm(2) TS(10) NOP WS(3) = 20 bytes (the common layout).
pub const SYN_OPTIONS_LEN: u32 = 20;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Proto {
    #[default]
    Tcp,
    Udp,
}

/// A SACK block `[left, right)` in 32-bit sequence space (RFC 2018 §3).
pub type SackBlock = (u32, u32);

/// The TCP header fields the model uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHdr {
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub opts: u8,
    /// Window field as sent (already right-shifted by the sender's window scale).
    pub wnd: u16,
    /// MSS option value (SYN only).
    pub mss: u16,
    /// Window-scale shift (SYN only).
    pub wscale: u8,
    pub n_sack: u8,
    pub ts_val: u32,
    pub ts_ecr: u32,
    pub sack: [SackBlock; 4],
}

/// A packet on the simulated network.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// Destination endpoint (index into the simulation's endpoints): hosts demultiplex by it.
    pub ep: u32,
    /// Flow index (for measurement and loss accounting).
    pub flow: u32,
    pub src: u16,
    pub dst: u16,
    pub proto: Proto,
    /// Knob `tso`: a segment after the first of a TSO frame. Its sending host's queue counts the
    /// frame once (Linux queues a frame as one `sk_buff`, segmented by the NIC after the qdisc;
    /// src/link.rs); every later hop counts each segment.
    pub frame_cont: bool,
    /// IP packet length in bytes (what link rates and byte-limited queues count).
    pub wire_len: u32,
    /// Payload bytes (TCP segment data or UDP datagram payload).
    pub payload: u32,
    /// UDP datagram number (UDP only).
    pub udp_seq: u64,
    pub tcp: TcpHdr,
}

impl Packet {
    #[inline]
    pub fn has_flag(&self, f: u8) -> bool {
        self.tcp.flags & f != 0
    }
    #[inline]
    pub fn is_tcp_data(&self) -> bool {
        self.proto == Proto::Tcp && self.payload > 0
    }
}

/// Bytes of TCP options on a non-SYN segment carrying `n_sack` SACK blocks.
#[inline]
pub fn tcp_options_len(ts: bool, n_sack: u8) -> u32 {
    let mut len = if ts { TS_OPTION_LEN } else { 0 };
    if n_sack > 0 {
        // NOP NOP SACK(2 + 8n) (RFC 2018 §3).
        len += 4 + 8 * n_sack as u32;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_packet_stays_compact() {
        // Packets are copied into the pool and out of endpoint buffers; keep them small.
        assert!(
            std::mem::size_of::<Packet>() <= 96,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }
}
