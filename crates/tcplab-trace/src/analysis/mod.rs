//! tcptrace-style analysis of TCP connections, fed one packet at a time.
//!
//! Memory is proportional to the number of connections and to each direction's unacknowledged
//! data (see [`seqspace`]), never to the number of packets.
//!
//! The counts tcptrace prints with `-l` (packets, ACKs, pure ACKs, data packets and bytes, unique
//! bytes, retransmitted packets and bytes, out-of-order packets, zero-window probes, SACK
//! packets, window advertisement min/avg/max, RTT samples, duplicate ACKs, throughput) follow
//! tcptrace 6.6.7's definitions (`trace.c` `dotrace`, `rexmit.c`, `output.c`), read for facts
//! only; they are validated against the tcptrace binary by `tests/test_trace_tcptrace.py`.
//! On top of that we check what the studies (seed experiment J4) needed:
//!
//! * **Window violations**: a segment carrying new data (beyond the highest sequence number sent
//!   before) that ends beyond the right edge (ACK + scaled window) of the receiver's current
//!   window. The current window is taken from ACKs as RFC 9293 §3.10.7.4 updates SND.WND: an ACK
//!   older than the one that set the window does not change it (reordered ACKs). If the
//!   receiver shrinks its window (RFC 9293 §3.8.6), data sent before is not at fault, and
//!   retransmissions are not checked ("SHOULD retransmit normally the old unacknowledged data");
//!   new data beyond the shrunken edge is. A one-byte probe into a zero window is allowed
//!   (RFC 9293 §3.8.6.1). Only checked when both SYNs were seen: window scaling is unknown
//!   otherwise.
//! * **Invalid SACK blocks** (RFC 2018 §3-4, RFC 2883 §4 for D-SACK): right edge not above left
//!   edge; a block starting below the cumulative ACK unless it is the first block and a D-SACK;
//!   a block ending beyond the highest sequence number sent; a block covering bytes never sent.
//! * **Zero-window probes** (tcptrace's definition: a segment with data or FIN sent while the
//!   receiver's last advertised window was zero).

pub mod seqspace;
pub mod timestamps;
pub mod tsg;

use crate::decode::{decode, Decoded, TcpSegment};
use crate::pcap::{CaptureError, CaptureReader, CaptureRecord, Format};
use seqspace::{RangeSet, SeqSpace};
use std::collections::BTreeMap;
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
pub use timestamps::{timestamps_path, timestamps_reader, DirTimestamps};
pub use tsg::{Dir, DirSeries, NoSink, SegKind, SeriesSink, TsgSink};

/// Analyzer settings.
#[derive(Debug, Clone, Copy)]
pub struct AnalyzerConfig {
    /// Graph events before this time (ns since the first packet of the capture) are not
    /// reported to the sink. Statistics always cover the whole capture.
    pub tsg_from_ns: Option<u64>,
    /// Graph events after this time are not reported.
    pub tsg_to_ns: Option<u64>,
    /// A packet on the same four-tuple after this much idle time starts a new connection
    /// (tcptrace's default: 4 minutes).
    pub new_conn_idle_ns: u64,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        AnalyzerConfig {
            tsg_from_ns: None,
            tsg_to_ns: None,
            new_conn_idle_ns: 240_000_000_000,
        }
    }
}

/// RTT statistics over samples in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttStats {
    pub samples: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    sum: f64,
    sum2: f64,
}

impl RttStats {
    pub fn add(&mut self, x: u64) {
        if self.samples == 0 || x < self.min_ns {
            self.min_ns = x;
        }
        self.max_ns = self.max_ns.max(x);
        let f = x as f64;
        self.sum += f;
        self.sum2 += f * f;
        self.samples += 1;
    }

    /// Mean in ns, `None` without samples.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum / self.samples as f64)
    }

    /// Sample standard deviation (n − 1) in ns, `None` below two samples.
    pub fn stdev_ns(&self) -> Option<f64> {
        if self.samples < 2 {
            return None;
        }
        let n = self.samples as f64;
        let var = (self.sum2 - self.sum * self.sum / n) / (n - 1.0);
        Some(var.max(0.0).sqrt())
    }
}

/// Statistics of one direction of a connection (the data this host sent, and, for RTT and
/// duplicate ACKs, the ACKs that came back for it — tcptrace's attribution).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirStats {
    pub packets: u64,
    /// Packets with the ACK flag.
    pub ack_pkts: u64,
    /// ACK without data, SYN, FIN or RST.
    pub pure_acks: u64,
    pub data_pkts: u64,
    /// Data bytes including retransmissions.
    pub data_bytes: u64,
    /// Data bytes sent for the first time.
    pub unique_bytes: u64,
    /// Segments (data, SYN or FIN) carrying at least one byte sent before.
    pub rexmt_pkts: u64,
    /// Sequence-space bytes sent before (SYN and FIN count one).
    pub rexmt_bytes: u64,
    pub out_of_order_pkts: u64,
    pub zwnd_probe_pkts: u64,
    pub zwnd_probe_bytes: u64,
    pub pushed_data_pkts: u64,
    pub syn_pkts: u64,
    pub fin_pkts: u64,
    pub rst_pkts: u64,
    /// Packets whose payload the capture's snaplen cut.
    pub truncated_pkts: u64,
    /// ACKs carrying a SACK option.
    pub sack_pkts: u64,
    pub sack_blocks: u64,
    pub max_sack_blocks: u64,
    /// ACKs whose first SACK block is a D-SACK (tcptrace's three tests).
    pub dsack_pkts: u64,
    pub invalid_sack_blocks: u64,
    /// Right edge not above left edge.
    pub invalid_sack_reversed: u64,
    /// Starts below the cumulative ACK and is not a D-SACK.
    pub invalid_sack_below_ack: u64,
    /// Ends beyond the highest sequence number the data sender had sent.
    pub invalid_sack_beyond_sent: u64,
    /// Covers bytes the data sender never sent (a hole in what was seen).
    pub invalid_sack_unsent: u64,
    /// MSS option of this host's SYN.
    pub mss: Option<u16>,
    /// Window-scale option of this host's SYN.
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    pub min_seg_size: u64,
    pub max_seg_size: u64,
    /// Advertised windows (scaled once scaling is in force), tcptrace's way: min over nonzero
    /// values, zero windows counted separately.
    pub win_max: u64,
    pub win_min: u64,
    pub win_zero_adv: u64,
    pub win_avg: f64,
    /// RTT samples for this direction's data.
    pub rtt: RttStats,
    /// ACKs that ended at a retransmitted segment (Karn: no sample).
    pub rtt_ambiguous: u64,
    /// ACKs that ended at a segment sent before a later-retransmitted one.
    pub rtt_no_sample: u64,
    /// Duplicate ACKs received for this direction's data.
    pub dup_acks: u64,
    pub triple_dupacks: u64,
    /// Whether the receiver's window could be checked (both SYNs seen and a window advertised).
    pub window_checked: bool,
    pub window_violations: u64,
    pub window_violation_bytes: u64,
    pub max_outstanding: u64,
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    pub first_data_ts_ns: Option<u64>,
    pub last_data_ts_ns: Option<u64>,
    /// Sequence number of this host's SYN, if seen.
    pub initial_seq: Option<u32>,
    /// Sequence-space span from the first to the highest byte seen (unwrapped).
    pub seq_span: u64,
    /// Unique bytes per second over the connection's duration (tcptrace's "throughput").
    pub throughput_bytes_per_s: Option<f64>,
}

/// Maps 32-bit sequence numbers to 64-bit offsets from a base, choosing the value nearest the
/// highest one seen (RFC 9293 §3.4 comparison in modulo-2^32 arithmetic).
#[derive(Debug, Clone, Copy)]
struct Unwrapper {
    base: u32,
    max: i64,
}

impl Unwrapper {
    fn peek(&self, x: u32) -> i64 {
        let reference = self.base.wrapping_add(self.max as u32);
        self.max + i64::from(x.wrapping_sub(reference) as i32)
    }

    fn unwrap(&mut self, x: u32) -> i64 {
        let v = self.peek(x);
        self.max = self.max.max(v);
        v
    }
}

/// Per-direction state: tcptrace's bookkeeping plus ours.
#[derive(Debug, Clone, Default)]
struct DirState {
    stats: DirStats,
    syn_count: u32,
    fin_count: u32,
    syn_raw: u32,
    /// This host asked for window scaling in its SYN.
    f1323_ws: bool,
    ws_shift: u8,
    /// Window (scaled) of the last non-RST packet this host sent; 0 if it had no ACK/SYN.
    win_last: u64,
    /// Last ACK number this host sent (tcptrace sets it to the peer's ISN on the peer's SYN).
    sent_ack_raw: u32,
    /// ACK + window of this host's last ACK, 32-bit (for the new-connection heuristic).
    windowend_raw: u32,
    /// tcptrace's "outstanding window" sum was positive (a duplicate-ACK precondition).
    owin_positive: bool,
    win_scaled_stats: bool,
    win_scaled_pkts: u64,
    win_tot: u64,
    ss: SeqSpace,
    unwrap: Option<Unwrapper>,
    syn_seen: bool,
    first_seq64: Option<i64>,
    snd_max: Option<i64>,
    sent: RangeSet,
    /// Highest ACK the peer sent for this direction's data.
    peer_ack_max: Option<i64>,
    /// ACK of the peer's segment that last set the window (RFC 9293 SND.WL2).
    peer_wnd_ack: Option<i64>,
    /// Right edge of the peer's current window for this direction's data (SND.UNA + SND.WND).
    peer_right_edge: Option<i64>,
}

impl DirState {
    /// Unwraps a sequence number of this direction; the first one seen sets the base.
    fn unwrap_seq(&mut self, seq: u32, syn: bool) -> i64 {
        let u = self.unwrap.get_or_insert(Unwrapper {
            base: if syn { seq } else { seq.wrapping_sub(1) },
            max: 0,
        });
        u.unwrap(seq)
    }

    /// Unwraps an ACK number for this direction's data (received from the peer).
    fn unwrap_ack(&mut self, ack: u32) -> i64 {
        let u = self.unwrap.get_or_insert(Unwrapper {
            base: ack.wrapping_sub(1),
            max: 0,
        });
        u.unwrap(ack)
    }

    fn outstanding(&self) -> Option<i64> {
        let top = self.snd_max?;
        let base = self.peer_ack_max.or(self.first_seq64)?;
        Some((top - base).max(0))
    }
}

/// One connection.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Order of first appearance in the capture (0-based).
    pub index: usize,
    /// The host that sent the first packet seen.
    pub a: SocketAddr,
    pub b: SocketAddr,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub packets: u64,
    dirs: [DirState; 2],
}

impl Connection {
    pub fn stats(&self, d: Dir) -> &DirStats {
        &self.dirs[d.index()].stats
    }

    /// Both SYNs and both FINs seen (tcptrace's "complete conn").
    pub fn complete(&self) -> bool {
        self.dirs
            .iter()
            .all(|d| d.stats.syn_pkts > 0 && d.stats.fin_pkts > 0)
    }

    pub fn reset(&self) -> bool {
        self.dirs.iter().any(|d| d.stats.rst_pkts > 0)
    }

    fn finish(&mut self) {
        let elapsed_s = (self.last_ts_ns.saturating_sub(self.first_ts_ns)) as f64 / 1e9;
        for d in &mut self.dirs {
            let st = &mut d.stats;
            // tcptrace output.c: averaged over window-scaled packets once scaling is in force,
            // otherwise over all packets of the direction.
            let n = if d.win_scaled_stats {
                d.win_scaled_pkts
            } else {
                st.packets
            };
            st.win_avg = if n > 0 {
                d.win_tot as f64 / n as f64
            } else {
                0.0
            };
            st.throughput_bytes_per_s =
                (elapsed_s > 0.0).then(|| st.unique_bytes as f64 / elapsed_s);
            if let (Some(a), Some(b)) = (d.first_seq64, d.snd_max) {
                st.seq_span = (b - a).max(0) as u64;
            }
        }
    }

    fn process<S: TsgSink>(
        &mut self,
        d: Dir,
        ts: u64,
        seg: &TcpSegment,
        trel: Option<u64>,
        sink: &mut S,
    ) {
        let ci = self.index;
        self.last_ts_ns = ts;
        self.packets += 1;
        let [x, y] = &mut self.dirs;
        let (th, ot) = match d {
            Dir::AtoB => (x, y),
            Dir::BtoA => (y, x),
        };
        let t = &seg.tcp;
        let (syn, fin, rst, ackf) = (t.flags.syn(), t.flags.fin(), t.flags.rst(), t.flags.ack());
        let dlen = u64::from(seg.payload_len);

        let st = &mut th.stats;
        st.first_ts_ns.get_or_insert(ts);
        st.last_ts_ns = Some(ts);
        if syn {
            th.syn_count += 1;
            st.syn_pkts += 1;
        }
        if rst {
            st.rst_pkts += 1;
        }
        if fin {
            th.fin_count += 1;
            st.fin_pkts += 1;
        }

        // Effective window: the field shifted by this host's scale once both SYNs asked for
        // scaling; never scaled in a SYN (RFC 7323 §2.2).
        let eff_win: u64 = if ackf || syn {
            let w = u64::from(t.window);
            if th.f1323_ws && ot.f1323_ws && !syn {
                w << th.ws_shift
            } else {
                w
            }
        } else {
            0
        };
        if syn {
            th.syn_raw = t.seq;
            ot.sent_ack_raw = t.seq;
            th.syn_seen = true;
            st.initial_seq = Some(t.seq);
        }
        if ackf {
            th.windowend_raw = t.ack.wrapping_add(eff_win as u32);
        }

        // Options.
        let o = &t.options;
        if let Some(m) = o.mss {
            st.mss = Some(m);
        }
        if let Some(ws) = o.window_scale {
            // RFC 7323 §2.3: a shift above 14 is used as 14.
            th.ws_shift = ws.min(14);
            th.f1323_ws = true;
            st.window_scale = Some(ws);
        }
        if o.timestamp.is_some() {
            st.timestamps = true;
        }
        if !(syn || th.f1323_ws && ot.f1323_ws) {
            th.ws_shift = 0;
            ot.ws_shift = 0;
        }
        if o.sack_permitted {
            st.sack_permitted = true;
        }

        // Data.
        let st = &mut th.stats;
        if dlen > 0 {
            st.data_pkts += 1;
            st.data_bytes += dlen;
            if t.flags.psh() {
                st.pushed_data_pkts += 1;
            }
            st.max_seg_size = st.max_seg_size.max(dlen);
            if st.min_seg_size == 0 || dlen < st.min_seg_size {
                st.min_seg_size = dlen;
            }
            st.first_data_ts_ns.get_or_insert(ts);
            st.last_data_ts_ns = Some(ts);
            if u64::from(seg.captured_payload_len) < dlen {
                st.truncated_pkts += 1;
            }
        }
        st.packets += 1;
        if th.win_scaled_stats {
            th.win_scaled_pkts += 1;
        }

        // Sequence space: retransmissions, out of order, unique bytes, probes.
        let prev_snd_max = th.snd_max;
        let seq64 = th.unwrap_seq(t.seq, syn);
        th.first_seq64.get_or_insert(seq64);
        let occupies = dlen + u64::from(syn) + u64::from(fin);
        let (mut rex, mut probe, mut ooo) = (0u64, false, false);
        if occupies > 0 {
            if ot.win_last == 0 && ot.stats.packets > 0 && !syn {
                probe = true;
                th.stats.zwnd_probe_pkts += 1;
                th.stats.zwnd_probe_bytes += dlen;
            } else {
                let r = th.ss.add(seq64, seq64 + occupies as i64, ts);
                rex = r.rexmit_bytes;
                ooo = r.out_of_order;
            }
            if ooo {
                th.stats.out_of_order_pkts += 1;
            }
            // tcptrace: SYN and FIN are not data; a repeated SYN/FIN is not a data rexmit.
            let mut rc = rex as i64;
            let mut l = occupies as i64;
            if syn {
                l -= 1;
                if th.syn_count > 1 {
                    rc -= 1;
                }
            }
            if fin {
                l -= 1;
                if th.fin_count > 1 {
                    rc -= 1;
                }
            }
            // tcptrace lets `rc` go negative when a repeated SYN/FIN was not a retransmission
            // in sequence space (a SYN with a new ISN), counting one byte that was never sent
            // as unique; we do not.
            let rc = rc.max(0);
            if !probe && rc < l {
                th.stats.unique_bytes += (l - rc) as u64;
            }
            let end64 = seq64 + occupies as i64;
            th.sent.insert(seq64, end64);
            th.snd_max = Some(th.snd_max.map_or(end64, |m| m.max(end64)));
        }

        // Window violation: new data beyond the right edge of the receiver's current window.
        let data_start = seq64 + i64::from(syn);
        let data_end = data_start + dlen as i64;
        let mut violation = false;
        if dlen > 0 && th.syn_seen && ot.syn_seen {
            if let Some(edge) = th.peer_right_edge {
                th.stats.window_checked = true;
                let new_from = prev_snd_max.map_or(data_start, |m| m.max(data_start));
                let allowed_probe = ot.win_last == 0 && dlen <= 1;
                if data_end > edge && data_end > new_from && !allowed_probe {
                    violation = true;
                    th.stats.window_violations += 1;
                    th.stats.window_violation_bytes += (data_end - new_from.max(edge)) as u64;
                }
            }
        }

        if let Some(tr) = trel {
            if occupies > 0 {
                let kind = if rex > 0 {
                    SegKind::Retransmission
                } else if violation {
                    SegKind::WindowViolation
                } else if probe {
                    SegKind::ZeroWindowProbe
                } else if ooo {
                    SegKind::OutOfOrder
                } else if dlen == 0 && syn {
                    SegKind::Syn
                } else if dlen == 0 && fin {
                    SegKind::Fin
                } else {
                    SegKind::Data
                };
                sink.segment(ci, d, tr, seq64, seq64 + occupies as i64, kind);
            }
        }
        if occupies > 0 && rex == 0 && !ooo {
            if let Some(out) = th.outstanding() {
                th.stats.max_outstanding = th.stats.max_outstanding.max(out as u64);
                if let Some(tr) = trel {
                    sink.outstanding(ci, d, tr, out);
                }
            }
        }

        // The ACK, for the other direction's data: RTT and duplicate ACKs.
        let mut ack64 = 0;
        if ackf {
            ack64 = ot.unwrap_ack(t.ack);
            let dup_ok =
                dlen == 0 && t.ack == th.sent_ack_raw && eff_win == th.win_last && ot.owin_positive;
            let r = ot.ss.ack(ack64, t.ack, ts, dup_ok);
            if let Some(rtt) = r.rtt_ns {
                ot.stats.rtt.add(rtt);
                if let Some(tr) = trel {
                    sink.rtt(ci, d.other(), tr, rtt);
                }
            }
            ot.stats.rtt_ambiguous += u64::from(r.ambiguous);
            ot.stats.rtt_no_sample += u64::from(r.no_sample);
            ot.stats.dup_acks += u64::from(r.dupack);
            ot.stats.triple_dupacks += u64::from(r.triple_dupack);
        }
        if rex > 0 {
            th.stats.rexmt_pkts += 1;
            th.stats.rexmt_bytes += rex;
        }

        if rst {
            // tcptrace stops here for resets: no window, SACK or outstanding-window stats.
            if ackf {
                th.stats.ack_pkts += 1;
            }
            return;
        }

        th.win_last = eff_win;
        if ackf || syn {
            let st = &mut th.stats;
            st.win_max = st.win_max.max(eff_win);
            if eff_win > 0 && th.f1323_ws && ot.f1323_ws && !syn && !th.win_scaled_stats {
                // First scaled advertisement: restart the window statistics (tcptrace).
                th.win_scaled_stats = true;
                st.win_min = eff_win;
                st.win_max = eff_win;
                th.win_tot = 0;
                th.win_scaled_pkts = 1;
            } else if eff_win > 0 && (st.win_min == 0 || eff_win < st.win_min) {
                st.win_min = eff_win;
            }
            th.win_tot += eff_win;
        }

        if ackf {
            let st = &mut th.stats;
            if eff_win == 0 {
                st.win_zero_adv += 1;
            }
            st.ack_pkts += 1;
            if dlen == 0 && !syn && !fin {
                st.pure_acks += 1;
            }
            let blocks = o.sack_blocks();
            if !blocks.is_empty() {
                st.sack_pkts += 1;
                st.sack_blocks += blocks.len() as u64;
                st.max_sack_blocks = st.max_sack_blocks.max(blocks.len() as u64);
            }
            th.sent_ack_raw = t.ack;

            // Our view of the other direction: ACK line, window edge, SACK validity.
            ot.peer_ack_max = Some(ot.peer_ack_max.map_or(ack64, |m| m.max(ack64)));
            let edge = ack64 + eff_win as i64;
            if ot.peer_wnd_ack.is_none_or(|w| ack64 >= w) {
                ot.peer_wnd_ack = Some(ack64);
                ot.peer_right_edge = Some(edge);
            }
            if let Some(m) = ot.peer_ack_max {
                ot.sent.trim_below(m);
            }
            if let Some(tr) = trel {
                sink.ack(ci, d.other(), tr, ack64, edge);
                if let Some(out) = ot.outstanding() {
                    sink.outstanding(ci, d.other(), tr, out);
                }
            }
            if !blocks.is_empty() {
                check_sacks(th, ot, blocks, ack64, ci, d.other(), trel, sink);
            }
        }

        // tcptrace's outstanding-window estimate, needed only for its duplicate-ACK test.
        if !syn && !ooo && rex == 0 {
            let end = u64::from(t.seq) + dlen;
            let owin = if ot.sent_ack_raw == 0 {
                dlen
            } else {
                end.wrapping_sub(u64::from(ot.sent_ack_raw.wrapping_sub(1)))
            };
            if owin != 0 {
                th.owin_positive = true;
            }
        }
    }
}

/// Classifies the SACK blocks `blocks` sent by `acker` about `sender`'s data.
#[allow(clippy::too_many_arguments)]
fn check_sacks<S: TsgSink>(
    acker: &mut DirState,
    sender: &mut DirState,
    blocks: &[(u32, u32)],
    ack64: i64,
    ci: usize,
    data_dir: Dir,
    trel: Option<u64>,
    sink: &mut S,
) {
    let u = sender
        .unwrap
        .expect("ACK processing initialised the unwrapper");
    let mut first_dsack = false;
    let b0 = (u.peek(blocks[0].0), u.peek(blocks[0].1));
    if b0.1 <= ack64 {
        first_dsack = true; // RFC 2883 §4: D-SACK below the cumulative ACK
    } else if blocks.len() > 1 {
        let b1 = (u.peek(blocks[1].0), u.peek(blocks[1].1));
        // RFC 2883 §4: D-SACK inside (or, as tcptrace also accepts, overlapping) the second.
        let inside = b0.1 <= b1.1 && b0.0 >= b1.0;
        let overlap = (b0.0 <= b1.0 && b0.1 > b1.0) || (b0.1 >= b1.1 && b0.0 < b1.1);
        first_dsack = inside || overlap;
    }
    if first_dsack {
        acker.stats.dsack_pkts += 1;
    }
    for (i, &(l, r)) in blocks.iter().enumerate() {
        let (l64, r64) = (u.peek(l), u.peek(r));
        let st = &mut acker.stats;
        let valid = if (r.wrapping_sub(l) as i32) <= 0 {
            st.invalid_sack_reversed += 1;
            false
        } else if sender.snd_max.is_some_and(|m| r64 > m) {
            st.invalid_sack_beyond_sent += 1;
            false
        } else if i == 0 && first_dsack {
            true
        } else if l64 < ack64 {
            st.invalid_sack_below_ack += 1;
            false
        } else if sender.snd_max.is_some() && !sender.sent.covers(l64, r64) {
            st.invalid_sack_unsent += 1;
            false
        } else {
            true
        };
        if !valid {
            st.invalid_sack_blocks += 1;
        }
        if let Some(tr) = trel {
            sink.sack(ci, data_dir, tr, l64, r64, valid);
        }
    }
}

/// Capture-wide counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureStats {
    pub records: u64,
    pub tcp_packets: u64,
    pub udp_packets: u64,
    pub fragments: u64,
    pub other_ip: u64,
    pub not_ip: u64,
    pub unsupported_link: u64,
    /// Frames whose headers could not be parsed (counted, skipped).
    pub malformed: u64,
    /// Records whose captured length is below the original length.
    pub snapped: u64,
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
}

/// Everything the analysis found.
#[derive(Debug, Clone)]
pub struct Report {
    pub format: Option<Format>,
    pub capture: CaptureStats,
    pub connections: Vec<Connection>,
}

type Key = (IpAddr, u16, IpAddr, u16);

/// The streaming analyzer.
#[derive(Debug)]
pub struct Analyzer {
    cfg: AnalyzerConfig,
    conns: Vec<Connection>,
    index: BTreeMap<Key, usize>,
    cache: Option<(Key, usize)>,
    cap: CaptureStats,
}

impl Analyzer {
    pub fn new(cfg: AnalyzerConfig) -> Self {
        Analyzer {
            cfg,
            conns: Vec::new(),
            index: BTreeMap::new(),
            cache: None,
            cap: CaptureStats::default(),
        }
    }

    /// Number of connections seen so far.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Sequence ranges held in memory over all connections (sent-segment records and sent-byte
    /// ranges): what the analyzer's memory grows with.
    pub fn debug_dump(&self) {
        eprintln!("{:?}", &self.conns[0].dirs[0].ss);
    }
    pub fn debug_ranges(&self) -> Vec<(usize, usize)> {
        self.conns
            .iter()
            .flat_map(|c| c.dirs.iter())
            .map(|d| (d.ss.len(), d.sent.len()))
            .collect()
    }

    pub fn tracked_ranges(&self) -> usize {
        self.conns
            .iter()
            .flat_map(|c| c.dirs.iter())
            .map(|d| d.ss.len() + d.sent.len())
            .sum()
    }

    /// Feeds one capture record: decodes it and, if it is TCP, analyses it.
    pub fn feed_record<S: TsgSink>(&mut self, rec: &CaptureRecord<'_>, sink: &mut S) {
        self.cap.records += 1;
        if (rec.data.len() as u64) < u64::from(rec.orig_len) {
            self.cap.snapped += 1;
        }
        self.note_time(rec.ts_ns);
        match decode(rec.linktype, rec.data) {
            Ok(Decoded::Tcp(seg)) => {
                self.cap.tcp_packets += 1;
                self.feed_segment(rec.ts_ns, &seg, sink);
            }
            Ok(Decoded::Udp { .. }) => self.cap.udp_packets += 1,
            Ok(Decoded::Fragment) => self.cap.fragments += 1,
            Ok(Decoded::OtherIp(_)) => self.cap.other_ip += 1,
            Ok(Decoded::NotIp) => self.cap.not_ip += 1,
            Ok(Decoded::UnsupportedLink(_)) => self.cap.unsupported_link += 1,
            Err(_) => self.cap.malformed += 1,
        }
    }

    fn note_time(&mut self, ts: u64) {
        self.cap.first_ts_ns.get_or_insert(ts);
        self.cap.last_ts_ns = Some(self.cap.last_ts_ns.map_or(ts, |l| l.max(ts)));
    }

    /// Feeds one decoded TCP segment captured at `ts_ns`; returns the connection (its index, as
    /// in the report) and the direction it was counted in.
    pub fn feed_segment<S: TsgSink>(
        &mut self,
        ts_ns: u64,
        seg: &TcpSegment,
        sink: &mut S,
    ) -> (usize, Dir) {
        self.note_time(ts_ns);
        let trel = ts_ns.saturating_sub(self.cap.first_ts_ns.unwrap_or(ts_ns));
        let in_window = self.cfg.tsg_from_ns.is_none_or(|f| trel >= f)
            && self.cfg.tsg_to_ns.is_none_or(|t| trel <= t);
        let (ci, d) = self.lookup(ts_ns, seg);
        self.conns[ci].process(d, ts_ns, seg, in_window.then_some(trel), sink);
        (ci, d)
    }

    fn lookup(&mut self, ts: u64, seg: &TcpSegment) -> (usize, Dir) {
        let (s, sp, dd, dp) = (seg.src, seg.tcp.src_port, seg.dst, seg.tcp.dst_port);
        let key: Key = if (s, sp) <= (dd, dp) {
            (s, sp, dd, dp)
        } else {
            (dd, dp, s, sp)
        };
        let found = match self.cache {
            Some((k, i)) if k == key => Some(i),
            _ => self.index.get(&key).copied(),
        };
        if let Some(i) = found {
            let c = &self.conns[i];
            let d = if c.a == SocketAddr::new(s, sp) {
                Dir::AtoB
            } else {
                Dir::BtoA
            };
            if !self.starts_new_connection(c, d, ts, seg) {
                self.cache = Some((key, i));
                return (i, d);
            }
        }
        let i = self.conns.len();
        self.conns.push(Connection {
            index: i,
            a: SocketAddr::new(s, sp),
            b: SocketAddr::new(dd, dp),
            first_ts_ns: ts,
            last_ts_ns: ts,
            packets: 0,
            dirs: [DirState::default(), DirState::default()],
        });
        self.index.insert(key, i);
        self.cache = Some((key, i));
        (i, Dir::AtoB)
    }

    /// tcptrace's rules (trace.c `FindTTP`) for a new connection on the same four-tuple:
    /// idle longer than the limit; or a SYN after a FIN or RST whose sequence number lies beyond
    /// the peer's last window end or below this side's previous SYN; or a SYN whose sequence
    /// number differs from this side's earlier SYNs (tcptrace requires two earlier SYNs).
    fn starts_new_connection(&self, c: &Connection, d: Dir, ts: u64, seg: &TcpSegment) -> bool {
        if ts.saturating_sub(c.last_ts_ns) > self.cfg.new_conn_idle_ns {
            return true;
        }
        if !seg.tcp.flags.syn() {
            return false;
        }
        let th = &c.dirs[d.index()];
        let ot = &c.dirs[d.other().index()];
        let seq = seg.tcp.seq;
        let closed = c
            .dirs
            .iter()
            .any(|x| x.fin_count > 0 || x.stats.rst_pkts > 0);
        // tcptrace compares these as plain (not modular) numbers.
        let rule2 = closed && (seq > ot.windowend_raw || seq < th.syn_raw);
        let rule3 = th.syn_count > 1 && th.syn_raw != seq;
        rule2 || rule3
    }

    /// Ends the analysis and returns the report.
    pub fn finish(mut self) -> Report {
        for c in &mut self.conns {
            c.finish();
        }
        Report {
            format: None,
            capture: self.cap,
            connections: self.conns,
        }
    }
}

/// Reads a whole capture from `r` and analyses it, streaming. Graph events go to `sink`.
pub fn analyze_reader<R: Read, S: TsgSink>(
    r: R,
    cfg: AnalyzerConfig,
    sink: &mut S,
) -> Result<Report, CaptureError> {
    let mut reader = CaptureReader::new(r)?;
    let mut a = Analyzer::new(cfg);
    while let Some(rec) = reader.next_record()? {
        a.feed_record(&rec, sink);
    }
    let mut rep = a.finish();
    rep.format = Some(reader.format());
    Ok(rep)
}

/// Opens and analyses the capture at `path`. I/O errors opening the file have offset 0.
pub fn analyze_path<S: TsgSink>(
    path: &std::path::Path,
    cfg: AnalyzerConfig,
    sink: &mut S,
) -> Result<Report, CaptureError> {
    let f = std::fs::File::open(path).map_err(|e| CaptureError {
        offset: 0,
        kind: crate::pcap::CaptureErrorKind::Io(e),
    })?;
    analyze_reader(f, cfg, sink)
}
