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
