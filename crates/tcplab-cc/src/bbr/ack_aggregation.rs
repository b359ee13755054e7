//! ACK aggregation allowance (`extra_acked`), part of Linux's BBR v1 since 4.20 (L:
//! net/ipv4/tcp_bbr.c, "bbr: adapt cwnd based on ack aggregation estimation";
//! draft-cardwell-iccrg-bbr-congestion-control-02 §4.6.4.1 "BBRUpdateACKAggregation").
//!
//! Wi-Fi, delayed and stretched ACKs and receiver batching deliver data in bursts faster than
//! the bottleneck rate. BBR estimates the excess and lets cwnd cover it so the sender keeps
//! sending between bursts:
//!
//! * An *ACK epoch* starts when the data delivered since its start is no more than BtlBw would
//!   have delivered in that time (or after 2²⁰ packets); the epoch's `extra` is what was
//!   delivered beyond `BtlBw · (now − epoch start)`, capped at cwnd.
//! * The allowance is the larger of the maxima of two windows of 5 rounds each (the current
//!   window restarts every 5 rounds: a max over the last 5–10 rounds).
//! * It is added to the cwnd target (not to the inflight targets of the gain cycle) once the
//!   pipe is full, with gain 1, at most 100 ms of data at BtlBw.
//!
//! Only ACKs with a valid rate sample that deliver data count, as in Linux.

use super::Bbr;
use crate::{AckEvent, Nanos, SEC};

/// "Window length of extra_acked window" (`bbr_extra_acked_win_rtts`), rounds.
const WINDOW_ROUNDS: u32 = 5;
/// Epoch reset threshold (`bbr_ack_epoch_acked_reset_thresh` = 2²⁰ packets).
const EPOCH_RESET_PACKETS: u64 = 1 << 20;
/// Cap on the allowance (`bbr_extra_acked_max_us` = 100 ms of data at BtlBw).
const MAX_ALLOWANCE: Nanos = 100_000_000;
/// Gain on the allowance (`bbr_extra_acked_gain` = 1).
const GAIN: f64 = 1.0;

/// Estimator state, bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AckAggregation {
    /// Maxima of the two 5-round windows, and which one is current.
    extra: [u64; 2],
    idx: usize,
    /// Rounds since the current window started.
    window_rounds: u32,
    /// Start of the ACK epoch and data delivered in it.
    epoch_start: Nanos,
    epoch_acked: u64,
}

impl AckAggregation {
    /// The estimate: max over the two windows (Linux `bbr_extra_acked`).
    pub fn extra_acked(&self) -> u64 {
        self.extra[0].max(self.extra[1])
    }
}

impl Bbr {
    /// Linux `bbr_update_ack_aggregation`; `acked` = data newly delivered by this ACK.
    pub(super) fn update_ack_aggregation(&mut self, ev: &AckEvent, acked: u64) {
        if acked == 0 || ev.rate.is_none_or(|r| r.interval == 0) {
            return;
        }
        let a = &mut self.aggr;
        if self.round_start {
            a.window_rounds = (a.window_rounds + 1).min(0x1F);
            if a.window_rounds >= WINDOW_ROUNDS {
                a.window_rounds = 0;
                a.idx ^= 1;
                a.extra[a.idx] = 0;
            }
        }
        // Data BtlBw would have delivered since the epoch started.
        let bw = self.bw.get();
        let epoch = ev.now.saturating_sub(a.epoch_start);
        let mut expected = (bw / 8.0 * epoch as f64 / SEC as f64) as u64;
        // A new epoch when the ACK rate fell to (or below) BtlBw, or after very many packets.
        if a.epoch_acked <= expected
            || a.epoch_acked.saturating_add(acked) >= EPOCH_RESET_PACKETS * self.mss
        {
            a.epoch_acked = 0;
            a.epoch_start = ev.now;
            expected = 0;
        }
        a.epoch_acked = a.epoch_acked.saturating_add(acked);
        let extra = a.epoch_acked.saturating_sub(expected).min(self.win.cwnd());
        if extra > a.extra[a.idx] {
            a.extra[a.idx] = extra;
        }
    }

    /// Linux `bbr_ack_aggregation_cwnd`: the allowance added to the cwnd target, bytes (0
    /// until the pipe is full).
    pub(crate) fn aggregation_cwnd(&self) -> u64 {
        if !self.p.ack_aggregation || !self.full_bw_reached {
            return 0;
        }
        let cap = (self.bw.get() / 8.0 * MAX_ALLOWANCE as f64 / SEC as f64) as u64;
        ((GAIN * self.aggr.extra_acked() as f64) as u64).min(cap)
    }
}
