//! Endpoints: the protocol machines living on hosts. The engine hands each a [`Cx`] (time, an
//! output buffer and the host NIC's free room); endpoints never see the event queue.

use crate::background::MiceArrivals;
use crate::packet::Packet;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::time::Nanos;
use crate::udp::{OnOffSource, UdpSink, UdpSource};

/// What an endpoint may do while handling an event.
pub struct Cx<'a> {
    pub now: Nanos,
    out: &'a mut Vec<Packet>,
    nic_room: u32,
    /// When the host NIC frees a slot, if it is full now ([`Cx::nic_free_at`]).
    nic_free_at: Nanos,
    /// The same in picoseconds, not yet rounded ([`Cx::with_free_ps`]).
    nic_free_ps: Option<u64>,
}

impl<'a> Cx<'a> {
    pub fn new(now: Nanos, out: &'a mut Vec<Packet>, nic_room: u32, nic_free_at: Nanos) -> Self {
        Cx {
            now,
            out,
            nic_room,
            nic_free_at,
            nic_free_ps: None,
        }
    }

    /// The NIC frees a slot at `ps` picoseconds (the packet it is serialising finishes then;
    /// `None`: it is idle, and [`Cx::nic_free_at`] is the time given to [`Cx::new`]). Rounded
    /// to ns only when asked: most handlers never ask.
    #[inline]
    pub fn with_free_ps(mut self, ps: Option<u64>) -> Self {
        self.nic_free_ps = ps;
        self
    }

    /// When the host NIC frees a slot, if it is full now.
    #[inline]
    pub fn nic_free_at(&self) -> Nanos {
        self.nic_free_ps
            .map_or(self.nic_free_at, crate::time::ps_to_ns_ceil)
    }

    /// Hand a packet to the host's NIC (a TSO frame's later segments take no room of their own:
    /// [`Packet::frame_cont`]).
    #[inline]
    pub fn send(&mut self, p: Packet) {
        self.nic_room = self.nic_room.saturating_sub(u32::from(!p.frame_cont));
        self.out.push(p);
    }

    /// Whether the host's transmit ring can take another packet now.
    #[inline]
    pub fn nic_has_room(&self) -> bool {
        self.nic_room > 0
    }
}

/// All endpoint kinds (enum dispatch: no virtual calls, no per-endpoint boxing of the hot path).
pub enum Endpoint {
    TcpSender(Box<TcpSender>),
    TcpReceiver(Box<TcpReceiver>),
    UdpSource(UdpSource),
    UdpSink(UdpSink),
    /// Background on-off UDP source (crate::background).
    OnOff(Box<OnOffSource>),
    /// The arrival process of a background mice source: `sim.rs` starts a connection per
    /// arrival; it never sends or receives packets itself.
    BgArrivals(Box<MiceArrivals>),
    /// A free slot of the background connection pool (packets for it are discarded earlier).
    Vacant,
}

impl Endpoint {
    #[inline]
    pub fn on_packet(&mut self, p: &Packet, cx: &mut Cx) {
        match self {
            Endpoint::TcpSender(s) => s.on_packet(p, cx),
            Endpoint::TcpReceiver(r) => r.on_packet(p, cx),
            Endpoint::UdpSource(_) => {}
            Endpoint::UdpSink(k) => k.on_packet(p, cx.now),
            Endpoint::OnOff(_) | Endpoint::BgArrivals(_) | Endpoint::Vacant => {}
        }
    }

    #[inline]
    pub fn on_timer(&mut self, cx: &mut Cx) {
        match self {
            Endpoint::TcpSender(s) => s.on_timer(cx),
            Endpoint::TcpReceiver(r) => r.on_timer(cx),
            Endpoint::UdpSource(u) => u.on_timer(cx),
            Endpoint::OnOff(u) => u.on_timer(cx),
            Endpoint::UdpSink(_) | Endpoint::BgArrivals(_) | Endpoint::Vacant => {}
        }
    }

    #[inline(always)]
    pub fn poll_at(&self) -> Option<Nanos> {
        match self {
            Endpoint::TcpSender(s) => s.poll_at(),
            Endpoint::TcpReceiver(r) => r.poll_at(),
            Endpoint::UdpSource(u) => u.poll_at(),
            Endpoint::OnOff(u) => u.poll_at(),
            Endpoint::BgArrivals(a) => a.poll_at(),
            Endpoint::UdpSink(_) | Endpoint::Vacant => None,
        }
    }
}
