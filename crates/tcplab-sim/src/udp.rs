//! UDP constant-bit-rate traffic like `iperf -u -b RATE -l LEN`: iperf paces the *payload* at
//! the requested rate, so a datagram of `LEN` payload bytes leaves every `8·LEN/RATE` seconds.

use crate::endpoint::Cx;
use crate::packet::{self, Packet, Proto};
use crate::time::Nanos;

pub struct UdpSource {
    pub flow: u32,
    pub peer: u32,
    pub src: u16,
    pub dst: u16,
    pub start: Nanos,
    pub stop: Nanos,
    pub rate_bps: u64,
    pub payload: u32,
    next: Nanos,
    /// Picosecond remainder so the long-run rate is exact.
    next_ps_rem: u64,
    pub sent: u64,
    /// Datagrams the host could not queue (NIC ring full).
    pub local_drops: u64,
}

impl UdpSource {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        peer: u32,
        src: u16,
        dst: u16,
        start: Nanos,
        stop: Nanos,
        rate_bps: u64,
        payload: u32,
    ) -> Self {
        UdpSource {
            flow,
            peer,
            src,
            dst,
            start,
            stop,
            rate_bps,
            payload,
            next: start,
            next_ps_rem: 0,
            sent: 0,
            local_drops: 0,
        }
    }

    pub fn poll_at(&self) -> Option<Nanos> {
        (self.next < self.stop).then_some(self.next)
    }

    pub fn on_timer(&mut self, cx: &mut Cx) {
        while self.next <= cx.now && self.next < self.stop {
            if cx.nic_has_room() {
                cx.send(Packet {
                    ep: self.peer,
                    flow: self.flow,
                    src: self.src,
                    dst: self.dst,
                    proto: Proto::Udp,
                    wire_len: self.payload + packet::IPV4_HEADER + packet::UDP_HEADER,
                    payload: self.payload,
                    udp_seq: self.sent,
                    ..Packet::default()
                });
            } else {
                self.local_drops += 1;
            }
            self.sent += 1;
            let gap_ps = crate::time::tx_time_ps(self.payload, self.rate_bps) + self.next_ps_rem;
            self.next += gap_ps / 1000;
            self.next_ps_rem = gap_ps % 1000;
        }
    }
}

#[derive(Default)]
pub struct UdpSink {
    pub received: u64,
    pub bytes: u64,
    pub highest: u64,
}

impl UdpSink {
    pub fn on_packet(&mut self, p: &Packet, _now: Nanos) {
        self.received += 1;
        self.bytes += p.payload as u64;
        self.highest = self.highest.max(p.udp_seq + 1);
    }
}

/// The law of an on-off source's period lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Periods {
    /// Exponential on and off periods (ns-2's documented `Application/Traffic/Exponential`:
    /// packets at a fixed rate during on periods, none during off periods, both periods
    /// exponentially distributed).
    Exponential,
    /// Pareto periods with this shape (> 1): heavy-tailed on/off periods, whose superposition is
    /// self-similar (Willinger, Taqqu, Sherman & Wilson, IEEE/ACM ToN 5(1), 1997).
    Pareto(f64),
}

/// On-off UDP: during an on period datagrams leave at `peak_bps` (payload rate, as
/// [`UdpSource`]); during an off period nothing is sent. Mean payload rate =
/// peak · E[on] / (E[on] + E[off]). The source starts in an on period with probability
/// E[on] / (E[on] + E[off]) (the stationary phase; exact for exponential periods, which are
/// memoryless, an approximation for Pareto ones).
pub struct OnOffSource {
    pub cbr: UdpSource,
    pub periods: Periods,
    pub on_mean_ns: f64,
    pub off_mean_ns: f64,
    /// End of the current on period.
    on_until: Nanos,
    rng: crate::rng::Rng,
}

impl OnOffSource {
    pub fn new(
        cbr: UdpSource,
        periods: Periods,
        on_mean_ns: f64,
        off_mean_ns: f64,
        mut rng: crate::rng::Rng,
    ) -> Self {
        let start = cbr.start;
        let p_on = on_mean_ns / (on_mean_ns + off_mean_ns);
        let mut s = OnOffSource {
            cbr,
            periods,
            on_mean_ns,
            off_mean_ns,
            on_until: start,
            rng: crate::rng::Rng::new(0),
        };
        // First period: on with the stationary probability, else off (on_until = start makes
        // the first call begin with an off period).
        if rng.next_f64() < p_on {
            s.on_until = start.saturating_add(s.draw(&mut rng, on_mean_ns));
        }
        s.rng = rng;
        s
    }

    fn draw(&self, rng: &mut crate::rng::Rng, mean: f64) -> Nanos {
        let x = match self.periods {
            Periods::Exponential => crate::background::exponential(rng, mean),
            Periods::Pareto(a) => crate::background::pareto(rng, a, mean),
        };
        crate::background::to_ns(x)
    }

    pub fn poll_at(&self) -> Option<Nanos> {
        self.cbr.poll_at()
    }

    pub fn on_timer(&mut self, cx: &mut Cx) {
        loop {
            if self.cbr.next >= self.cbr.stop || self.cbr.next > cx.now {
                return;
            }
            if self.cbr.next >= self.on_until {
                // The on period is over: an off period, then the next on period.
                let mut rng = std::mem::replace(&mut self.rng, crate::rng::Rng::new(0));
                let off = self.draw(&mut rng, self.off_mean_ns);
                let on = self.draw(&mut rng, self.on_mean_ns);
                self.rng = rng;
                self.cbr.next = self.on_until.saturating_add(off);
                self.cbr.next_ps_rem = 0;
                self.on_until = self.cbr.next.saturating_add(on);
                continue;
            }
            // Send what is due in this on period (one datagram at a time so the period's end
            // is honoured).
            let stop = self.cbr.stop;
            self.cbr.stop = self.on_until.min(stop);
            let before = self.cbr.sent;
            self.cbr.on_timer(cx);
            self.cbr.stop = stop;
            if self.cbr.sent == before {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_onoff_mean_rate() {
        // Peak 10 Mbit/s, on 100 ms, off 300 ms on average: mean 2.5 Mbit/s over 2000 s.
        let cbr = UdpSource::new(0, 1, 0, 1, 0, 2_000_000_000_000, 10_000_000, 1250);
        let mut s = OnOffSource::new(
            cbr,
            Periods::Exponential,
            1e8,
            3e8,
            crate::rng::Rng::for_entity(1, "bg-onoff", "u"),
        );
        let mut out = Vec::new();
        while let Some(t) = s.poll_at() {
            let mut cx = Cx::new(t, &mut out, u32::MAX, t);
            s.on_timer(&mut cx);
            out.clear();
        }
        let rate = s.cbr.sent as f64 * 1250.0 * 8.0 / 2000.0;
        // The on-indicator of an alternating exponential renewal process (rates a = 10/s off,
        // b = 3.33/s on, p = 0.25 on) has autocorrelation e^(−(a+b)t), so its time average over
        // T has variance ≈ 2p(1−p)/((a+b)T): sd 0.0037 here, 1.5 % of p. Allow 5 % (> 3 sd).
        assert!((rate - 2.5e6).abs() < 0.05 * 2.5e6, "{rate}");
    }
}
