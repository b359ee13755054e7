//! Synthetic captures: a deterministic bulk transfer as seen at the sender, with losses
//! repaired by fast retransmit, SACK blocks and sequence wrap, for benchmarks, tests and fuzz
//! seeds. This is not a TCP model (the simulator is); it only has to produce traffic whose
//! analysis result is known: every `loss_every`-th new segment is lost once downstream of the
//! capture point and retransmitted once, as soon as three segments above it were SACKed
//! (RFC 6675 §4, DupThresh = 3) or, without SACK, after three duplicate ACKs.

use crate::pcap::{emit_tcp_frame, LinkKind, PcapWriter, TcpFrame};
use crate::wire::{EthernetAddress, TcpFlags, TcpOptions, TcpRepr};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Parameters of a synthetic bulk transfer.
#[derive(Debug, Clone, Copy)]
pub struct BulkConfig {
    /// New data segments to send.
    pub segments: u64,
    pub mss: u32,
    /// Initial sequence number of the sender (A) and receiver (B).
    pub isn_a: u32,
    pub isn_b: u32,
    /// Time between new segments at the sender.
    pub gap_ns: u64,
    /// One-way delay (so the RTT is twice this).
    pub owd_ns: u64,
    /// Every `loss_every`-th new segment is lost once (0: no loss).
    pub loss_every: u64,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scale: Option<u8>,
    pub link: LinkKind,
    pub ipv6: bool,
    /// Capture start time (ns since the epoch).
    pub t0_ns: u64,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            segments: 1000,
            mss: 1448,
            isn_a: 0xfff0_0000,
            isn_b: 1000,
            gap_ns: 120_000,
            owd_ns: 10_000_000,
            loss_every: 100,
            sack: true,
            timestamps: true,
            window_scale: Some(7),
            link: LinkKind::Ethernet,
            ipv6: false,
            t0_ns: 1_700_000_000_000_000_000,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Sender puts segment i on the wire (captured), `retx` for a retransmission.
    Send {
        i: u64,
        retx: bool,
    },
    /// Segment i reaches the receiver (not captured).
    Arrive {
        i: u64,
    },
    /// An ACK reaches the sender (captured): cumulative segment count, SACK ranges.
    Ack {
        cum: u64,
        sack: [(u64, u64); 3],
        nsack: u8,
        /// The segment whose arrival triggered this ACK.
        newest: u64,
    },
    /// Retransmission timer after the last new segment (repairs tail losses).
    Rto,
    Fin,
    FinAck,
}

/// Iterator over the packets of a [`BulkConfig`] transfer in capture order.
pub struct BulkTransfer {
    cfg: BulkConfig,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    counter: u64,
    handshake: u8,
    next_new: u64,
    // receiver
    rcv_cum: u64,
    rcv_ooo: BTreeSet<u64>,
    // sender
    last_cum: u64,
    dups: u32,
    retransmitted: BTreeSet<u64>,
    sacked: BTreeSet<u64>,
    next_check: u64,
    fin_sent: bool,
    done: bool,
}

impl BulkTransfer {
    pub fn new(cfg: BulkConfig) -> Self {
        BulkTransfer {
            cfg,
            heap: BinaryHeap::new(),
            counter: 0,
            handshake: 0,
            next_new: 0,
            rcv_cum: 0,
            rcv_ooo: BTreeSet::new(),
            last_cum: 0,
            dups: 0,
            retransmitted: BTreeSet::new(),
            sacked: BTreeSet::new(),
            next_check: 0,
            fin_sent: false,
            done: false,
        }
    }

    fn push(&mut self, t: u64, e: Ev) {
        self.counter += 1;
        self.heap.push(Reverse((t, self.counter, e)));
    }

    fn addrs(&self) -> (IpAddr, IpAddr) {
        if self.cfg.ipv6 {
            (
                IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1)),
                IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 1, 1)),
            )
        } else {
            (
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            )
        }
    }

    fn frame(
        &self,
        from_a: bool,
        t: u64,
        tcp: TcpRepr,
        payload_len: usize,
    ) -> (u64, TcpFrame<'static>) {
        let (a, b) = self.addrs();
        let (src, dst) = if from_a { (a, b) } else { (b, a) };
        let mac = |ip: IpAddr| match ip {
            IpAddr::V4(v4) => EthernetAddress::from_ipv4(v4),
            IpAddr::V6(v6) => {
                let o = v6.octets();
                EthernetAddress([2, 0, o[12], o[13], o[14], o[15]])
            }
        };
        let mut tcp = tcp;
        if self.cfg.timestamps {
            let tsval = (t / 1_000_000) as u32;
            tcp.options.timestamp = Some((
                tsval,
                tsval.wrapping_sub((self.cfg.owd_ns / 1_000_000) as u32),
            ));
        }
        (
            self.cfg.t0_ns + t,
            TcpFrame {
                link: self.cfg.link,
                src_mac: mac(src),
                dst_mac: mac(dst),
                src,
                dst,
                ttl: 64,
                ident: 0,
                dscp_ecn: 0,
                tcp,
                payload_len,
                payload: &[],
            },
        )
    }

    fn seq_a(&self, i: u64) -> u32 {
        self.cfg
            .isn_a
            .wrapping_add(1)
            .wrapping_add((i * u64::from(self.cfg.mss)) as u32)
    }

    fn base(&self, from_a: bool, flags: u16) -> TcpRepr {
        TcpRepr {
            src_port: if from_a { 40000 } else { 5001 },
            dst_port: if from_a { 5001 } else { 40000 },
            seq: 0,
            ack: 0,
            flags: TcpFlags(flags),
            window: 0xffff,
            urgent: 0,
            options: TcpOptions::default(),
        }
    }

    /// The next captured packet: (timestamp ns, frame).
    pub fn next_packet(&mut self) -> Option<(u64, TcpFrame<'static>)> {
        let c = self.cfg;
        let rtt = 2 * c.owd_ns;
        // Three-way handshake, captured at A.
        if self.handshake < 3 {
            self.handshake += 1;
            let syn_opts = TcpOptions {
                mss: Some(c.mss as u16),
                window_scale: c.window_scale,
                sack_permitted: c.sack,
                ..Default::default()
            };
            return Some(match self.handshake {
                1 => {
                    let mut r = self.base(true, TcpFlags::SYN);
                    r.seq = c.isn_a;
                    r.options = syn_opts;
                    self.frame(true, 0, r, 0)
                }
                2 => {
                    let mut r = self.base(false, TcpFlags::SYN | TcpFlags::ACK);
                    r.seq = c.isn_b;
                    r.ack = c.isn_a.wrapping_add(1);
                    r.options = syn_opts;
                    self.frame(false, rtt, r, 0)
                }
                _ => {
                    let mut r = self.base(true, TcpFlags::ACK);
                    r.seq = c.isn_a.wrapping_add(1);
                    r.ack = c.isn_b.wrapping_add(1);
                    self.push(rtt + c.gap_ns, Ev::Send { i: 0, retx: false });
                    self.frame(true, rtt, r, 0)
                }
            });
        }
        loop {
            let Reverse((t, _, ev)) = self.heap.pop()?;
            match ev {
                Ev::Send { i, retx } => {
                    if !retx {
                        self.next_new = i + 1;
                        if self.next_new < c.segments {
                            self.push(
                                t + c.gap_ns,
                                Ev::Send {
                                    i: i + 1,
                                    retx: false,
                                },
                            );
                        } else {
                            self.push(t + 4 * rtt, Ev::Rto);
                        }
                    }
                    let lost = !retx && c.loss_every > 0 && i % c.loss_every == c.loss_every - 1;
                    if !lost {
                        self.push(t + c.owd_ns, Ev::Arrive { i });
                    }
                    let mut r = self.base(true, TcpFlags::ACK | TcpFlags::PSH);
                    r.seq = self.seq_a(i);
                    r.ack = c.isn_b.wrapping_add(1);
                    return Some(self.frame(true, t, r, c.mss as usize));
                }
                Ev::Arrive { i } => {
                    if i >= self.rcv_cum {
                        self.rcv_ooo.insert(i);
                    }
                    while self.rcv_ooo.remove(&self.rcv_cum) {
                        self.rcv_cum += 1;
                    }
                    // SACK blocks: the block holding the latest arrival first (RFC 2018 §4),
                    // then the others from the highest down.
                    let mut blocks: Vec<(u64, u64)> = Vec::new();
                    let mut it = self.rcv_ooo.iter().copied().peekable();
                    while let Some(s) = it.next() {
                        let mut e = s + 1;
                        while it.peek() == Some(&e) {
                            it.next();
                            e += 1;
                        }
                        blocks.push((s, e));
                    }
                    blocks.sort_by_key(|&(s, e)| (!(s <= i && i < e), Reverse(s)));
                    let mut sack = [(0, 0); 3];
                    let n = if c.sack { blocks.len().min(3) } else { 0 };
                    sack[..n].copy_from_slice(&blocks[..n]);
                    self.push(
                        t + c.owd_ns,
                        Ev::Ack {
                            cum: self.rcv_cum,
                            sack,
                            nsack: n as u8,
                            newest: i,
                        },
                    );
                }
                Ev::Ack {
                    cum,
                    sack,
                    nsack,
                    newest,
                } => {
                    if c.sack {
                        self.sack_recovery(t, cum, newest);
                    }
                    if cum == self.last_cum {
                        self.dups += 1;
                        if !c.sack
                            && self.dups == 3
                            && cum < c.segments
                            && self.retransmitted.insert(cum)
                        {
                            self.push(t, Ev::Send { i: cum, retx: true });
                        }
                    } else {
                        self.last_cum = cum;
                        self.dups = 0;
                    }
                    if cum == c.segments && !self.fin_sent && self.next_new >= c.segments {
                        self.fin_sent = true;
                        self.push(t, Ev::Fin);
                    }
                    let mut r = self.base(false, TcpFlags::ACK);
                    r.seq = c.isn_b.wrapping_add(1);
                    r.ack = self.seq_a(cum);
                    r.window = 0x4000;
                    let blocks: Vec<(u32, u32)> = sack[..usize::from(nsack)]
                        .iter()
                        .map(|&(s, e)| (self.seq_a(s), self.seq_a(e)))
                        .collect();
                    r.options.set_sack_blocks(&blocks);
                    return Some(self.frame(false, t, r, 0));
                }
                Ev::Rto => {
                    if self.last_cum < c.segments {
                        if self.retransmitted.insert(self.last_cum) {
                            self.push(
                                t,
                                Ev::Send {
                                    i: self.last_cum,
                                    retx: true,
                                },
                            );
                        }
                        self.push(t + 4 * rtt, Ev::Rto);
                    }
                }
                Ev::Fin => {
                    self.push(t + rtt, Ev::FinAck);
                    let mut r = self.base(true, TcpFlags::ACK | TcpFlags::FIN);
                    r.seq = self.seq_a(c.segments);
                    r.ack = c.isn_b.wrapping_add(1);
                    return Some(self.frame(true, t, r, 0));
                }
                Ev::FinAck => {
                    if self.done {
                        return None;
                    }
                    self.done = true;
                    let mut r = self.base(false, TcpFlags::ACK | TcpFlags::FIN);
                    r.seq = c.isn_b.wrapping_add(1);
                    r.ack = self.seq_a(c.segments).wrapping_add(1);
                    r.window = 0x4000;
                    return Some(self.frame(false, t, r, 0));
                }
            }
        }
    }

    /// SACK-based loss detection: a hole with three SACKed segments above it is retransmitted.
    fn sack_recovery(&mut self, t: u64, cum: u64, newest: u64) {
        if newest >= cum {
            self.sacked.insert(newest);
        }
        self.sacked = self.sacked.split_off(&cum);
        let Some(&highest) = self.sacked.last() else {
            return;
        };
        let mut h = self.next_check.max(cum);
        while h < highest {
            if self.sacked.contains(&h) {
                h += 1;
                continue;
            }
            if self.sacked.range(h + 1..).nth(2).is_none() {
                break;
            }
            if self.retransmitted.insert(h) {
                self.push(t, Ev::Send { i: h, retx: true });
            }
            h += 1;
        }
        self.next_check = h;
    }

    /// Number of segments that will be lost (and retransmitted once each).
    pub fn expected_losses(cfg: &BulkConfig) -> u64 {
        cfg.segments.checked_div(cfg.loss_every).unwrap_or(0)
    }
}

/// Writes the whole transfer as pcap (nanosecond) with the given snaplen; returns the number of
/// packets written.
pub fn write_bulk_pcap<W: Write>(cfg: BulkConfig, w: W, snaplen: u32) -> io::Result<u64> {
    let mut pw = PcapWriter::with_options(w, cfg.link.linktype(), snaplen)?;
    let mut g = BulkTransfer::new(cfg);
    let mut buf = Vec::with_capacity(2048);
    let mut n = 0;
    while let Some((ts, f)) = g.next_packet() {
        emit_tcp_frame(&mut buf, &f).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        pw.write_packet(ts, &buf)?;
        n += 1;
    }
    pw.into_inner()?;
    Ok(n)
}
