//! Receive-buffer autotuning (dynamic right-sizing, DRS: Fisher, Weigle & Feng, "Dynamic
//! right-sizing in FTP", 2001; Linux `tcp_moderate_rcvbuf`): once per estimated round trip the
//! receiver sets its buffer, and the window clamp with it, from the bytes the application took
//! in that round trip, so that the window stays ahead of the sender. Sans-I/O: the caller feeds
//! segment arrivals and deliveries and applies the buffer it returns.
//!
//! What decides whether such a window ever limits a sender is the round-trip time the receiver
//! divides by. Three estimators ([`RcvRttCfg`]):
//! - `handshake`: the handshake's RTT for the whole connection (the engine's model for the
//!   Windows and macOS receivers, whose auto-tuning algorithms are not published in detail).
//!   With a standing queue the true RTT is longer, so twice the bytes per handshake RTT can stay
//!   below the path's capacity and the window then holds the sender below the buffer.
//! - `linux-2.6` and `linux-6`: Linux's `rcv_rtt_est` (net/ipv4/tcp_input.c `tcp_rcv_rtt_update`,
//!   `tcp_rcv_rtt_measure`, `tcp_rcv_rtt_measure_ts`; read for the facts), fed by two kinds of
//!   sample. With timestamps, every full-sized data segment gives now − TSecr in timestamp ticks,
//!   queueing included, smoothed with gain 1/8. Whatever the options, once per advertised window
//!   of data the time it took to arrive, which may only lower the estimate. In 2.6 that per-window
//!   comparison used the unscaled sample against the ×8 estimate, so a per-window sample under
//!   eight times the estimate replaced it (fixed in 2017 by "tcp: fix tcp_rcv_rtt_update() use of
//!   an unscaled RTT sample"); a zero sample counts as one tick. Linux 6.15/6.16 ("tcp: always
//!   seek for minimal rtt in tcp_rcv_rtt_update()", "tcp: remove zero TCP TS samples for
//!   autotuning") latch a timestamp sample lower than the estimate at once and skip zero ones,
//!   and a timestamp echo already used gives no second sample (`rcv_rtt_last_tsecr`).
//!
//! The buffer rule: Linux 2.6 `tcp_rcv_space_adjust` sets the clamp to twice the bytes copied in
//! the last estimated RTT, if more than before. Linux 6.18 (`tcp_rcvbuf_grow`, with "tcp: fix too
//! slow tcp_rcvbuf_grow() action") does the same and, when the bytes copied grew, adds twice that
//! window times the relative growth, "to allow the sender to double its rate" in slow start, plus
//! the extent of the out-of-order queue (`boost`). The buffer never shrinks. Not modelled: the
//! 6.18 small-RTT damping (`tcp_rcvbuf_low_rtt`, later) and the 3.x–6.15 `16 × advmss` headroom.

use crate::time::Nanos;

/// Which round-trip time paces the autotuning (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RcvRttCfg {
    /// The handshake's RTT, fixed.
    #[serde(rename = "handshake")]
    Handshake,
    /// Linux 2.6 `rcv_rtt_est`: timestamp samples smoothed (gain 1/8), per-window samples
    /// compared unscaled.
    #[serde(rename = "linux-2.6")]
    Linux26,
    /// Linux 6.16+ `rcv_rtt_est`: lower timestamp samples latched at once, higher ones smoothed.
    #[serde(rename = "linux-6")]
    Linux6,
}

/// Dynamic right-sizing state of one receiver.
#[derive(Clone, Debug)]
pub struct Autotune {
    mode: RcvRttCfg,
    boost: bool,
    /// Largest window autotuning may set (bytes).
    max: u64,
    /// Tick of the timestamp clock (ns), the unit of timestamp samples and of 2.6's jiffies.
    tick: Nanos,
    /// `rcv_rtt_est` × 8, ns (0 = no estimate yet).
    rtt8: u64,
    last_tsecr: Option<u32>,
    /// Per-window measurement: stream offset that ends it and when it began (`rcv_rtt_est.seq`,
    /// `.time`); `None` before the first in-order data.
    win: Option<(u64, Nanos)>,
    /// `rcvq_space.space`: bytes copied in the last measured interval (2.6: twice that).
    space: u64,
    /// Start of the current interval and the bytes copied before it.
    tune_at: Nanos,
    tune_bytes: u64,
}

impl Autotune {
    /// `handshake_rtt` seeds the `handshake` estimator only; `initial_window` (bytes) and the
    /// segment size `mss` give Linux's starting `rcvq_space.space` (`tcp_init_buffer_space`:
    /// the initial window, in 6.x at most TCP_INIT_CWND = 10 segments).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        mode: RcvRttCfg,
        boost: bool,
        max: u64,
        tick: Nanos,
        handshake_rtt: Nanos,
        now: Nanos,
        initial_window: u64,
        mss: u32,
    ) -> Self {
        let initial_space = match mode {
            RcvRttCfg::Linux6 => initial_window.min(10 * mss as u64),
            _ => initial_window,
        };
        Autotune {
            mode,
            boost,
            max,
            tick: tick.max(1),
            rtt8: if mode == RcvRttCfg::Handshake {
                handshake_rtt.max(1) * 8
            } else {
                0
            },
            last_tsecr: None,
            win: None,
            space: initial_space,
            tune_at: now,
            tune_bytes: 0,
        }
    }

    /// The current estimate (ns), if any.
    pub fn rtt(&self) -> Option<Nanos> {
        (self.rtt8 > 0).then_some(self.rtt8 / 8)
    }

    /// A data segment of `len` bytes (≥ `full` is full-sized) echoed `ts_ecr`, the receiver's
    /// timestamp clock now reading `ts_now` (`tcp_rcv_rtt_measure_ts`).
    pub fn on_ts_echo(&mut self, ts_now: u32, ts_ecr: u32, len: u32, full: u32) {
        if ts_ecr == 0 {
            return;
        }
        match self.mode {
            RcvRttCfg::Handshake => {}
            RcvRttCfg::Linux26 => {
                if len >= full {
                    let ticks = ts_now.wrapping_sub(ts_ecr) as u64;
                    self.smooth(ticks.max(1) * self.tick);
                }
            }
            RcvRttCfg::Linux6 => {
                if self.last_tsecr == Some(ts_ecr) {
                    return;
                }
                self.last_tsecr = Some(ts_ecr);
                let ticks = ts_now.wrapping_sub(ts_ecr);
                if len >= full && ticks > 0 && ticks < u32::MAX / 2 {
                    let m = ticks as u64 * self.tick;
                    if self.rtt8 == 0 || m * 8 <= self.rtt8 {
                        self.rtt8 = m * 8;
                    } else {
                        self.smooth(m);
                    }
                }
            }
        }
    }

    /// Gain-1/8 smoothing of a timestamp sample (`win_dep` = 0).
    fn smooth(&mut self, m: u64) {
        if self.rtt8 == 0 {
            self.rtt8 = m * 8;
        } else {
            self.rtt8 = self.rtt8 - self.rtt8 / 8 + m;
        }
    }

    /// In-order data arrived: `rcv_nxt` is now at stream offset `rcv_nxt` and the window last
    /// offered is `rcv_wnd` bytes (`tcp_rcv_rtt_measure`, the per-window sample).
    pub fn on_in_order(&mut self, now: Nanos, rcv_nxt: u64, rcv_wnd: u64) {
        if self.mode == RcvRttCfg::Handshake {
            return;
        }
        if let Some((seq, t)) = self.win {
            if rcv_nxt < seq {
                return;
            }
            let m = match self.mode {
                // jiffies: whole ticks, at least one.
                RcvRttCfg::Linux26 => (now / self.tick - t / self.tick).max(1) * self.tick,
                _ => (now - t).max(1_000),
            };
            let replace = match self.mode {
                RcvRttCfg::Linux26 => self.rtt8 == 0 || m < self.rtt8,
                _ => self.rtt8 == 0 || m * 8 < self.rtt8,
            };
            if replace {
                self.rtt8 = m * 8;
            }
        }
        self.win = Some((rcv_nxt + rcv_wnd, now));
    }

    /// In-order data was delivered: `delivered` bytes so far, of which the application has not
    /// read `unread`; `ooo_extent` is the span of the out-of-order queue above `rcv_nxt`.
    /// Returns the window (bytes) the buffer should grow to, if this interval ended with growth
    /// (`tcp_rcv_space_adjust`, which counts what the application copied).
    pub fn on_copied(
        &mut self,
        now: Nanos,
        delivered: u64,
        unread: u64,
        ooo_extent: u64,
    ) -> Option<u64> {
        let rtt = self.rtt()?;
        let copied_total = match self.mode {
            // The engine's earlier model counted delivered bytes; kept for the receivers using it.
            RcvRttCfg::Handshake => delivered,
            _ => delivered - unread,
        };
        if now < self.tune_at + rtt {
            return None;
        }
        let copied = copied_total - self.tune_bytes;
        self.tune_at = now;
        self.tune_bytes = copied_total;
        let win = match self.mode {
            // The engine's earlier model, kept as it was for the receivers that use it.
            RcvRttCfg::Handshake => 2 * copied,
            RcvRttCfg::Linux26 => {
                if 2 * copied <= self.space {
                    return None;
                }
                self.space = 2 * copied;
                2 * copied
            }
            RcvRttCfg::Linux6 => {
                if copied <= self.space {
                    return None;
                }
                let old = self.space.max(1);
                self.space = copied;
                let mut w = 2 * copied;
                if self.boost {
                    w += 2 * (w as u128 * (copied - old) as u128 / old as u128) as u64;
                    w += ooo_extent;
                }
                w
            }
        };
        Some(win.min(self.max))
    }

    /// An out-of-order segment was queued; `ooo_extent` is the span of the out-of-order queue
    /// above `rcv_nxt`. Linux ≥ 6.16 calls `tcp_rcvbuf_grow` from `tcp_data_queue_ofo` too
    /// (63ad7dfedfae "tcp: adjust rcvbuf in presence of reorders", with the current
    /// `rcvq_space.space` as its new value since b1e014a1f327, so no slow-start growth term):
    /// the buffer's window becomes twice the last interval's bytes plus that extent, so that a
    /// hole does not stall the sender while the queue behind it fills. Only with `boost` (the
    /// same commit brought the extent into the rule) and a Linux 6 estimator.
    pub fn on_out_of_order(&self, ooo_extent: u64) -> Option<u64> {
        (self.mode == RcvRttCfg::Linux6 && self.boost)
            .then(|| (2 * self.space + ooo_extent).min(self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn handshake_mode_keeps_the_handshake_rtt_and_doubles_each_interval() {
        let mut a = Autotune::new(
            RcvRttCfg::Handshake,
            false,
            1 << 30,
            MS,
            20 * MS,
            0,
            0,
            1448,
        );
        a.on_ts_echo(500, 1, 1448, 1448);
        a.on_in_order(10 * MS, 1000, 65535);
        assert_eq!(a.rtt(), Some(20 * MS));
        assert_eq!(a.on_copied(19 * MS, 50_000, 0, 0), None);
        assert_eq!(a.on_copied(20 * MS, 50_000, 0, 0), Some(100_000));
        // Less than before still returns twice it: the buffer ignores a smaller value.
        assert_eq!(a.on_copied(40 * MS, 60_000, 0, 0), Some(20_000));
    }

    #[test]
    fn linux_timestamp_samples_include_queueing_and_smooth_with_gain_one_eighth() {
        let mut a = Autotune::new(
            RcvRttCfg::Linux26,
            false,
            1 << 30,
            4 * MS,
            20 * MS,
            0,
            0,
            1448,
        );
        assert_eq!(a.rtt(), None, "no estimate before a sample");
        a.on_ts_echo(15, 10, 1448, 1448); // 5 ticks = 20 ms
        assert_eq!(a.rtt(), Some(20 * MS));
        a.on_ts_echo(30, 20, 1448, 1448); // 40 ms: a queue built up
        assert_eq!(a.rtt(), Some(20 * MS + (40 - 20) * MS / 8));
        a.on_ts_echo(30, 30, 1448, 1448); // zero ticks count as one
        assert_eq!(a.rtt(), Some((7 * (22_500_000u64 * 8) / 8 + 4 * MS) / 8));
        let before = a.rtt();
        a.on_ts_echo(99, 10, 100, 1448); // not full-sized: no sample
        assert_eq!(a.rtt(), before);
    }

    #[test]
    fn linux6_latches_a_lower_timestamp_sample_and_uses_each_echo_once() {
        let mut a = Autotune::new(RcvRttCfg::Linux6, true, 1 << 30, MS, 20 * MS, 0, 0, 1448);
        a.on_ts_echo(140, 100, 1448, 1448);
        assert_eq!(a.rtt(), Some(40 * MS));
        a.on_ts_echo(160, 100, 1448, 1448); // same echo: ignored
        assert_eq!(a.rtt(), Some(40 * MS));
        a.on_ts_echo(180, 101, 1448, 1448); // higher: smoothed
        assert_eq!(a.rtt(), Some(40 * MS + (79 - 40) * MS / 8));
        a.on_ts_echo(200, 178, 1448, 1448); // lower: latched
        assert_eq!(a.rtt(), Some(22 * MS));
        a.on_ts_echo(200, 200, 1448, 1448); // zero: skipped
        assert_eq!(a.rtt(), Some(22 * MS));
    }

    #[test]
    fn per_window_samples_only_lower_the_estimate_and_2_6_compares_them_unscaled() {
        // 6.x: a per-window sample replaces the estimate only if lower.
        let mut a = Autotune::new(RcvRttCfg::Linux6, false, 1 << 30, MS, 0, 0, 0, 1448);
        a.on_in_order(0, 0, 10_000);
        a.on_in_order(30 * MS, 10_000, 10_000);
        assert_eq!(a.rtt(), Some(30 * MS));
        a.on_in_order(35 * MS, 15_000, 10_000); // window not yet through: no sample
        a.on_in_order(80 * MS, 20_000, 10_000); // 50 ms > 30 ms: kept
        assert_eq!(a.rtt(), Some(30 * MS));
        // 2.6: the unscaled sample against the ×8 estimate — 50 ms < 8 × 30 ms replaces it.
        let mut b = Autotune::new(RcvRttCfg::Linux26, false, 1 << 30, MS, 0, 0, 0, 1448);
        b.on_in_order(0, 0, 10_000);
        b.on_in_order(30 * MS, 10_000, 10_000);
        b.on_in_order(80 * MS, 20_000, 10_000);
        assert_eq!(b.rtt(), Some(50 * MS));
    }

    #[test]
    fn linux6_boost_grows_the_buffer_by_the_out_of_order_extent() {
        let mut t = Autotune::new(RcvRttCfg::Linux6, true, 1 << 30, MS, 10 * MS, 0, 0, 1000);
        t.space = 50_000;
        assert_eq!(t.on_out_of_order(30_000), Some(130_000));
        let capped = Autotune {
            max: 100_000,
            ..t.clone()
        };
        assert_eq!(capped.on_out_of_order(30_000), Some(100_000));
        let plain = Autotune {
            boost: false,
            ..t.clone()
        };
        assert_eq!(plain.on_out_of_order(30_000), None);
        let old = Autotune {
            mode: RcvRttCfg::Linux26,
            ..t
        };
        assert_eq!(old.on_out_of_order(30_000), None);
    }

    #[test]
    fn linux6_boost_lets_the_sender_double_and_the_buffer_follows_growth_only() {
        let mut a = Autotune::new(RcvRttCfg::Linux6, true, 1 << 30, MS, 0, 0, 14_480, 1448);
        // An RTT of 19 ms; 28 960 B copied in the first interval, twice the initial space:
        // 2c + 2·2c·(c − old)/old.
        a.on_ts_echo(20, 1, 1448, 1448);
        assert_eq!(
            a.on_copied(19 * MS, 28_960, 0, 0),
            Some(2 * 28_960 + 2 * 2 * 28_960)
        );
        // No growth in copied bytes: nothing to do.
        assert_eq!(a.on_copied(38 * MS, 2 * 28_960, 0, 0), None);
        // Growth by half, with 3 000 B out of order.
        let w = a.on_copied(57 * MS, 2 * 28_960 + 43_440, 0, 3_000).unwrap();
        assert_eq!(w, 2 * 43_440 + 2 * (2 * 43_440 * 14_480 / 28_960) + 3_000);
        // Without the boost (2.6 rule) the window is twice the bytes per interval.
        let mut b = Autotune::new(RcvRttCfg::Linux26, false, 50_000, MS, 0, 0, 14_480, 1448);
        b.on_ts_echo(20, 1, 1448, 1448);
        assert_eq!(b.on_copied(19 * MS, 20_000, 0, 0), Some(40_000));
        assert_eq!(
            b.on_copied(38 * MS, 40_000, 0, 0),
            None,
            "2 × 20 000 is not more"
        );
        assert_eq!(
            b.on_copied(57 * MS, 70_000, 0, 0),
            Some(50_000),
            "capped at the max"
        );
    }
}
