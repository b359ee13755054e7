//! A passive observer of chosen TCP connections at the sender's first hop, as web100 and tcptrace
//! see them from the wire: when the connection's first SYN left the sender, how many data
//! segments it sent and how many of those were retransmissions, and how many duplicate ACKs and
//! SACK blocks reached it. The kernel's TCP_INFO has no counters for duplicate ACKs and SACK
//! blocks, so the kernel engine takes them from here.
//!
//! Parsing follows the header layouts of RFC 791 §3.1 (IPv4), RFC 9293 §3.1 (TCP) and RFC 2018
//! §3 (SACK option, kind 5).

use serde::{Deserialize, Serialize};

const ETH_HDR: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;

/// The fields of one TCP segment the observer uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seg {
    pub saddr: [u8; 4],
    pub daddr: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub payload: u32,
    pub sack_blocks: u8,
    /// The first SACK block (the most recently received data, RFC 2018 §4), if any.
    pub sack_first: Option<(u32, u32)>,
}

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;

/// IPv4 total length of an Ethernet frame carrying IPv4, else None.
pub fn ipv4_len(frame: &[u8]) -> Option<u32> {
    if frame.len() < ETH_HDR + 20 || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = &frame[ETH_HDR..];
    if ip[0] >> 4 != 4 {
        return None;
    }
    Some(u16::from_be_bytes([ip[2], ip[3]]) as u32)
}

/// Parse a TCP segment out of an Ethernet frame (IPv4, first fragment only).
pub fn parse(frame: &[u8]) -> Option<Seg> {
    let total = ipv4_len(frame)? as usize;
    let ip = &frame[ETH_HDR..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ip[9] != 6 || ihl < 20 || total > ip.len() || total < ihl + 20 {
        return None;
    }
    // Not a later fragment.
    if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return None;
    }
    let t = &ip[ihl..total];
    let doff = ((t[12] >> 4) as usize) * 4;
    if doff < 20 || doff > t.len() {
        return None;
    }
    let mut seg = Seg {
        saddr: [ip[12], ip[13], ip[14], ip[15]],
        daddr: [ip[16], ip[17], ip[18], ip[19]],
        sport: u16::from_be_bytes([t[0], t[1]]),
        dport: u16::from_be_bytes([t[2], t[3]]),
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        ack: u32::from_be_bytes([t[8], t[9], t[10], t[11]]),
        flags: t[13],
        window: u16::from_be_bytes([t[14], t[15]]),
        payload: (t.len() - doff) as u32,
        sack_blocks: 0,
        sack_first: None,
    };
    let mut opts = &t[20..doff];
    while let Some(&kind) = opts.first() {
        match kind {
            0 => break,
            1 => opts = &opts[1..],
            _ => {
                let len = *opts.get(1)? as usize;
                if len < 2 || len > opts.len() {
                    return Some(seg);
                }
                if kind == 5 {
                    seg.sack_blocks = ((len - 2) / 8) as u8;
                    if len >= 10 {
                        let b = &opts[2..10];
                        seg.sack_first = Some((
                            u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                            u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                        ));
                    }
                }
                opts = &opts[len..];
            }
        }
    }
    Some(seg)
}

/// Addresses, ports and payload length of a TCP or UDP packet in an Ethernet frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L4 {
    pub proto: u8,
    pub saddr: [u8; 4],
    pub daddr: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    /// Transport payload bytes (after the TCP or UDP header).
    pub payload: u32,
}

/// Parse the transport addressing of a TCP (6) or UDP (17) packet.
pub fn parse_l4(frame: &[u8]) -> Option<L4> {
    let total = ipv4_len(frame)? as usize;
    let ip = &frame[ETH_HDR..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ihl < 20 || total > ip.len() || total < ihl + 8 {
        return None;
    }
    if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return None;
    }
    let t = &ip[ihl..total];
    let hdr = match ip[9] {
        6 if t.len() >= 20 => ((t[12] >> 4) as usize) * 4,
        17 => 8,
        _ => return None,
    };
    if hdr > t.len() {
        return None;
    }
    Some(L4 {
        proto: ip[9],
        saddr: [ip[12], ip[13], ip[14], ip[15]],
        daddr: [ip[16], ip[17], ip[18], ip[19]],
        sport: u16::from_be_bytes([t[0], t[1]]),
        dport: u16::from_be_bytes([t[2], t[3]]),
        payload: (t.len() - hdr) as u32,
    })
}

/// A connection (either direction) by protocol, addresses and ports.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FlowKey {
    pub proto: u8,
    pub a: [u8; 4],
    pub a_port: u16,
    pub b: [u8; 4],
    pub b_port: u16,
}

impl FlowKey {
    /// The packet belongs to this connection, in either direction.
    pub fn matches(&self, l: &L4) -> bool {
        l.proto == self.proto
            && ((l.saddr == self.a
                && l.sport == self.a_port
                && l.daddr == self.b
                && l.dport == self.b_port)
                || (l.saddr == self.b
                    && l.sport == self.b_port
                    && l.daddr == self.a
                    && l.dport == self.a_port))
    }
}

/// A flow whose delivered packets and payload bytes are counted where it leaves a link
/// direction (the receiver's last hop), sampled per interval: UDP goodput as the receiver sees it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountCfg {
    pub flow: String,
    pub link: usize,
    pub dir: String,
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
}

/// Cumulative counts of one [`CountCfg`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowCount {
    pub flow: String,
    pub packets: u64,
    pub bytes: u64,
}

/// Which connection to watch and where (the link direction leaving the sender).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchCfg {
    pub flow: String,
    /// Index into `links` of the sender's first hop, and the direction data travels on it.
    pub link: usize,
    pub data_dir: String,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
}

/// What was seen of one watched connection.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowObs {
    pub flow: String,
    /// When the first SYN arrived at the emulator from the sender (CLOCK_MONOTONIC ns).
    pub syn_mono_ns: Option<u64>,
    pub first_data_mono_ns: Option<u64>,
    /// The first segment of at least 536 bytes (RFC 9293's default MSS): the start of the bulk
    /// transfer (iperf3 first sends a 37-byte cookie, then waits a round trip for the test to
    /// start on its control connection).
    pub first_bulk_mono_ns: Option<u64>,
    pub data_segments: u64,
    pub data_bytes: u64,
    pub retransmitted_segments: u64,
    pub acks: u64,
    pub dupacks: u64,
    pub sack_blocks: u64,
    #[serde(skip)]
    snd_max: Option<u32>,
    #[serde(skip)]
    last_ack: Option<(u32, u16)>,
    #[serde(skip)]
    last_sack: Option<(u32, u32)>,
}

/// `a` is after `b` in sequence space (RFC 9293 §3.4 comparisons mod 2³²).
#[inline]
fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl FlowObs {
    pub fn new(flow: &str) -> FlowObs {
        FlowObs {
            flow: flow.to_string(),
            ..FlowObs::default()
        }
    }

    /// A segment from the sender, as it entered its first hop.
    pub fn on_data(&mut self, s: &Seg, now: u64) {
        if s.flags & SYN != 0 && self.syn_mono_ns.is_none() {
            self.syn_mono_ns = Some(now);
        }
        if s.payload == 0 {
            return;
        }
        self.first_data_mono_ns.get_or_insert(now);
        if s.payload >= 536 {
            self.first_bulk_mono_ns.get_or_insert(now);
        }
        self.data_segments += 1;
        self.data_bytes += s.payload as u64;
        let end = s.seq.wrapping_add(s.payload);
        match self.snd_max {
            Some(m) if !seq_gt(end, m) => self.retransmitted_segments += 1,
            _ => self.snd_max = Some(end),
        }
    }

    /// A segment towards the sender, as it left the sender's first hop. Duplicate ACK as the
    /// simulator's sender counts it (crates/tcplab-sim/src/tcp/sender/ack.rs): data outstanding, no
    /// payload, neither SYN nor FIN, the acknowledgment number not advanced, and — with SACK —
    /// new SACK information (RFC 6675 §2; here: a first block unlike the previous ACK's), or —
    /// without SACK — the same advertised window (RFC 5681 §2).
    pub fn on_ack(&mut self, s: &Seg) {
        if s.flags & ACK == 0 {
            return;
        }
        self.acks += 1;
        self.sack_blocks += s.sack_blocks as u64;
        let outstanding = self.snd_max.is_some_and(|m| seq_gt(m, s.ack));
        if let Some((a, w)) = self.last_ack {
            let news = match s.sack_first {
                Some(b) => self.last_sack != Some(b),
                None => w == s.window,
            };
            if outstanding && s.payload == 0 && s.flags & (SYN | FIN) == 0 && a == s.ack && news {
                self.dupacks += 1;
            }
        }
        self.last_ack = Some((s.ack, s.window));
        self.last_sack = s.sack_first;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Build an Ethernet + IPv4 + TCP frame (checksums left zero; the observer ignores them).
    pub(crate) fn frame(seg: &Seg, options: &[u8]) -> Vec<u8> {
        let doff = 20 + options.len();
        let total = 20 + doff + seg.payload as usize;
        let mut f = vec![0u8; ETH_HDR + total];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HDR..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&seg.saddr);
        ip[16..20].copy_from_slice(&seg.daddr);
        let t = &mut ip[20..];
        t[0..2].copy_from_slice(&seg.sport.to_be_bytes());
        t[2..4].copy_from_slice(&seg.dport.to_be_bytes());
        t[4..8].copy_from_slice(&seg.seq.to_be_bytes());
        t[8..12].copy_from_slice(&seg.ack.to_be_bytes());
        t[12] = ((doff / 4) as u8) << 4;
        t[13] = seg.flags;
        t[14..16].copy_from_slice(&seg.window.to_be_bytes());
        t[20..20 + options.len()].copy_from_slice(options);
        f
    }

    fn seg(seq: u32, ack: u32, flags: u8, payload: u32) -> Seg {
        Seg {
            saddr: [10, 1, 0, 1],
            daddr: [10, 2, 0, 2],
            sport: 40000,
            dport: 5201,
            seq,
            ack,
            flags,
            window: 500,
            payload,
            sack_blocks: 0,
            sack_first: None,
        }
    }

    #[test]
    fn test_parse_roundtrip_with_sack_option() {
        let s = seg(1000, 77, ACK, 0);
        // NOP NOP SACK(2 blocks) = 2 + 18 bytes.
        let mut opts = vec![1u8, 1, 5, 18];
        opts.extend_from_slice(&2000u32.to_be_bytes());
        opts.extend_from_slice(&3000u32.to_be_bytes());
        opts.extend_from_slice(&[0; 8]);
        let f = frame(&s, &opts);
        let p = parse(&f).unwrap();
        assert_eq!(p.sack_blocks, 2);
        assert_eq!(p.sack_first, Some((2000, 3000)));
        assert_eq!(
            (p.seq, p.ack, p.sport, p.dport, p.payload),
            (1000, 77, 40000, 5201, 0)
        );
        assert_eq!(ipv4_len(&f), Some(60));
    }

    #[test]
    fn test_parse_rejects_non_tcp_and_truncated() {
        let mut f = frame(&seg(1, 1, ACK, 10), &[]);
        assert!(parse(&f[..30]).is_none());
        f[ETH_HDR + 9] = 17;
        assert!(parse(&f).is_none());
        f[12] = 0x86;
        assert!(ipv4_len(&f).is_none());
    }

    #[test]
    fn test_observer_counts_retransmissions_and_dupacks() {
        let mut o = FlowObs::new("f");
        o.on_data(&seg(0, 0, SYN, 0), 5);
        o.on_data(&seg(1, 1, ACK, 1000), 7);
        o.on_data(&seg(1001, 1, ACK, 1000), 8);
        o.on_data(&seg(2001, 1, ACK, 1000), 9);
        // The second segment is retransmitted; wrap-around is handled.
        o.on_data(&seg(1001, 1, ACK, 1000), 10);
        assert_eq!((o.syn_mono_ns, o.first_data_mono_ns), (Some(5), Some(7)));
        assert_eq!(o.first_bulk_mono_ns, Some(7));
        assert_eq!((o.data_segments, o.retransmitted_segments), (4, 1));
        let mut a = seg(1, 1001, ACK, 0);
        o.on_ack(&a);
        // Without SACK: same ack and window = duplicate; a window update is not.
        o.on_ack(&a);
        a.window = 600;
        o.on_ack(&a);
        assert_eq!((o.acks, o.dupacks), (3, 1));
        // With SACK: a duplicate needs new SACK information, whatever the window does.
        a.sack_blocks = 1;
        a.sack_first = Some((2001, 3001));
        o.on_ack(&a);
        a.window = 500;
        o.on_ack(&a);
        a.sack_first = Some((2001, 4001));
        o.on_ack(&a);
        assert_eq!((o.acks, o.dupacks, o.sack_blocks), (6, 3, 3));
        // Nothing outstanding: not duplicate.
        let mut o2 = FlowObs::new("g");
        o2.on_ack(&seg(1, 1, ACK, 0));
        o2.on_ack(&seg(1, 1, ACK, 0));
        assert_eq!(o2.dupacks, 0);
    }

    #[test]
    fn test_parse_l4_udp_and_tcp() {
        let f = frame(&seg(1, 1, ACK, 100), &[1, 1, 1, 1]);
        let l = parse_l4(&f).unwrap();
        assert_eq!(
            (l.proto, l.sport, l.dport, l.payload),
            (6, 40000, 5201, 100)
        );
        // Turn it into UDP: the 124 bytes after the IP header are an 8-byte header + payload.
        let mut u = f.clone();
        u[ETH_HDR + 9] = 17;
        let l = parse_l4(&u).unwrap();
        assert_eq!((l.proto, l.payload), (17, 116));
        assert!(parse_l4(&u[..ETH_HDR + 24]).is_none());
    }

    #[test]
    fn test_observer_sequence_wraps() {
        let mut o = FlowObs::new("w");
        o.on_data(&seg(u32::MAX - 499, 0, ACK, 1000), 1);
        o.on_data(&seg(500, 0, ACK, 1000), 2);
        assert_eq!(o.retransmitted_segments, 0);
        o.on_data(&seg(u32::MAX - 499, 0, ACK, 1000), 3);
        assert_eq!(o.retransmitted_segments, 1);
    }
}
