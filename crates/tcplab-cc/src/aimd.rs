//! Pieces shared by the loss-based window controllers (`bic`, `hstcp`, `htcp`, `scalable`,
//! `illinois`, `westwood`, and CUBIC v2.0): the two ways Linux expresses a congestion-avoidance
//! increase, mapped onto [`WindowState`] so that both window units work, and the ssthresh
//! arithmetic they share.
//!
//! # The two increase forms
//!
//! * **`+1 segment per cnt ACK units`** — Linux `tcp_cong_avoid_ai(tp, cnt, acked)` and the
//!   older `if (snd_cwnd_cnt >= cnt) snd_cwnd++` (L: net/ipv4/tcp_cong.c; BIC, CUBIC,
//!   Scalable): [`increase_per_cnt`]. In the packets unit `cnt` counts credit units (ACKs, or
//!   acknowledged segments with ABC); in the bytes unit one segment's worth of credit is one MSS
//!   of bytes, so `cnt` segments are `cnt·MSS` bytes of credit.
//! * **`cwnd += α/cwnd` per ACK unit** — Linux `snd_cwnd_cnt += α·acked; cwnd++ when
//!   snd_cwnd_cnt ≥ cwnd` (HighSpeed, H-TCP, Illinois; RFC 3649 §5's `w += a(w)/w`):
//!   [`increase_per_window`], i.e. `α` segments per window of credit. In the bytes unit without
//!   ABC each ACK adds `α·SMSS·SMSS/cwnd`, RFC 5681 §3.1 eq. 3 scaled by `α`.

use crate::growth::{AiRule, CwndUnit, SsthreshBasis, WindowState};
use crate::{CongestionControl, CongestionEvent, RtoEvent};

/// `+1 segment per cnt segments' worth of credit` (see the module doc). In the packets unit
/// `cnt` is used rounded down (callers pass Linux's integer `cnt`); in bytes it may be
/// fractional. `cnt` below 1 (or NaN) is taken as 1, as Linux's "cnt cannot be zero".
/// The counter follows `rule` ([`WindowState::additive_increase_rule`]).
pub(crate) fn increase_per_cnt(win: &mut WindowState, rule: AiRule, credit: u64, cnt: f64) {
    let cnt = if cnt.is_nan() { 1.0 } else { cnt.max(1.0) };
    let per = match win.growth().unit {
        CwndUnit::Packets => cnt as u64, // saturating conversion
        CwndUnit::Bytes => (cnt * win.mss() as f64).round() as u64,
    };
    win.additive_increase_rule(rule, per.max(1), credit);
}

/// `cwnd += (num/den)/cwnd` per unit of credit: `num/den` segments per window of credit (see
/// the module doc). `num = 0` does nothing.
pub(crate) fn increase_per_window(win: &mut WindowState, credit: u64, num: u64, den: u64) {
    if num == 0 || credit == 0 {
        return;
    }
    let window = match win.growth().unit {
        CwndUnit::Packets => win.cwnd_segments(),
        CwndUnit::Bytes => win.cwnd(),
    };
    win.additive_increase(
        window.saturating_mul(den.max(1)),
        credit.saturating_mul(num),
    );
}

/// `⌊x·num/den⌋` without intermediate overflow (saturating at `u64::MAX`).
pub(crate) fn scale(x: u64, num: u64, den: u64) -> u64 {
    let r = u128::from(x) * u128::from(num) / u128::from(den.max(1));
    u64::try_from(r).unwrap_or(u64::MAX)
}

/// The window in segments: whole segments in the packets unit (Linux `snd_cwnd`), fractional in
/// bytes.
pub(crate) fn cwnd_segments(win: &WindowState) -> f64 {
    match win.growth().unit {
        CwndUnit::Packets => win.cwnd_segments() as f64,
        CwndUnit::Bytes => win.cwnd() as f64 / win.mss() as f64,
    }
}

/// `basis·num/den` as a new `ssthresh` in bytes: in the packets unit from the basis in whole
/// segments with Linux's integer rounding (`⌊basis_seg·num/den⌋` segments), in bytes exact to
/// the byte. The 2-segment floor is applied by [`WindowState::set_ssthresh`].
pub(crate) fn scaled_ssthresh(win: &WindowState, basis_bytes: u64, num: u64, den: u64) -> u64 {
    match win.growth().unit {
        CwndUnit::Packets => scale(basis_bytes / win.mss(), num, den).saturating_mul(win.mss()),
        CwndUnit::Bytes => scale(basis_bytes, num, den),
    }
}

/// `basis − ⌊basis·num/den⌋` as a new `ssthresh` in bytes (Linux `cwnd − (cwnd·b >> shift)`:
/// HighSpeed, Scalable, Illinois, BIC 2.6.10): in the packets unit from the basis in whole
/// segments, in bytes exact to the byte, as [`scaled_ssthresh`].
pub(crate) fn decreased_ssthresh(win: &WindowState, basis_bytes: u64, num: u64, den: u64) -> u64 {
    let whole = match win.growth().unit {
        CwndUnit::Packets => (basis_bytes / win.mss()) * win.mss(),
        CwndUnit::Bytes => basis_bytes,
    };
    whole - scaled_ssthresh(win, basis_bytes, num, den)
}

/// A retransmission timeout's decrease for the controllers whose timeout `ssthresh` is their
/// congestion-event rule at FlightSize (Linux `tcp_enter_loss` calls the algorithm's
/// `ssthresh` hook) where the stack's gate allows it ([`SsthreshBasis::reduces_on_timeout`]:
/// the first timeout of a series, RFC 5681 §3.1 eq. 4, held on repeated timeouts and, with
/// Linux's rule, inside an unfinished recovery; every one with the BSD basis).
/// The caller then takes the window to the loss window.
pub(crate) fn reduce_on_timeout(
    cc: &mut impl CongestionControl,
    basis: SsthreshBasis,
    ev: &RtoEvent,
) {
    if basis.reduces_on_timeout(ev) {
        cc.on_congestion_event(&CongestionEvent {
            now: ev.now,
            in_flight: ev.in_flight,
            mss: ev.mss,
            peer_window: ev.peer_window,
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::cc_init;
    use crate::AckEvent;

    fn win(unit: CwndUnit, abc_limit: u32, cwnd_seg: u64) -> WindowState {
        WindowState::new(&cc_init(1000, unit, abc_limit, cwnd_seg, 2000))
    }

    fn credit(w: &WindowState) -> u64 {
        let ev = AckEvent {
            bytes_acked: 1000,
            packets_acked: 1,
            packets_delivered: 1,
            mss: 1000,
            ..Default::default()
        };
        w.growth().avoidance_credit(&ev, w.mss())
    }

    #[test]
    fn test_increase_per_cnt_adds_one_segment_per_cnt_acks() {
        // Linux tcp_cong_avoid_ai(cnt): +1 segment after cnt ACK units, in both units.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut w = win(unit, 0, 100);
            for _ in 0..49 {
                let c = credit(&w);
                increase_per_cnt(&mut w, AiRule::Linux4, c, 50.0);
            }
            // Packets: whole segments; bytes: 1/50 segment per ACK (RFC 5681 eq. 3 style).
            let want = if unit == CwndUnit::Packets {
                100_000
            } else {
                100_980
            };
            assert_eq!(w.cwnd(), want, "{unit:?}");
            let c = credit(&w);
            increase_per_cnt(&mut w, AiRule::Linux4, c, 50.0);
            assert_eq!(w.cwnd(), 101_000, "{unit:?}");
        }
    }

    #[test]
    fn test_increase_per_window_adds_alpha_segments_per_window() {
        // RFC 3649 §5 w += a(w)/w per ACK: a = 3 over one window of 100 ACKs adds ~3 segments.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut w = win(unit, 0, 100);
            for _ in 0..100 {
                let c = credit(&w);
                increase_per_window(&mut w, c, 3, 1);
            }
            let segs = w.cwnd() as f64 / 1000.0;
            // Bytes: the window grows within the round, so slightly less than 3. Packets: the
            // third whole segment needs 102 more credit units after the second (at ACK 67),
            // i.e. it comes two ACKs into the next round.
            let lo = if unit == CwndUnit::Packets {
                102.0
            } else {
                102.9
            };
            assert!((lo..=103.0).contains(&segs), "{unit:?}: {segs}");
        }
    }

    #[test]
    fn test_scaled_ssthresh_rounds_like_linux_in_packets() {
        let w = win(CwndUnit::Packets, 0, 100);
        // ⌊1001·819/1024⌋ = 800 segments from 1001 segments (+ a partial segment ignored).
        assert_eq!(scaled_ssthresh(&w, 1_001_500, 819, 1024), 800_000);
        let w = win(CwndUnit::Bytes, 0, 100);
        assert_eq!(scaled_ssthresh(&w, 1_001_500, 819, 1024), 801_004);
    }
}
