//! Send scheduling of new data, sans I/O: how much room the application, the peer's window and
//! the send buffer leave ([`Room`]), the size of the next new segment with sender-side silly
//! window avoidance (RFC 9293 §3.8.6.2.1, RFC 6675 §4 NextSeg rule 2, [`next_new`]), and
//! limited transmit (RFC 3042 §2, [`limited_transmit_allows`]).
//!
//! The congestion window test, retransmissions first (NextSeg rule 1), pacing, the host queue
//! and the actual sending are [`super::TcpSender`]'s send loop.

/// Room for new data beyond snd_nxt, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// Data the application still has (u64::MAX while it keeps writing).
    pub app: u64,
    /// Left by the peer's advertised window.
    pub rwnd: u64,
    /// Left by the send buffer (unacknowledged data counts against it).
    pub buf: u64,
}

impl Room {
    pub fn new(snd_una: u64, snd_nxt: u64, app_end: Option<u64>, rwnd: u64, sndbuf: u64) -> Room {
        Room {
            app: app_end.map_or(u64::MAX, |e| e.saturating_sub(snd_nxt)),
            rwnd: (snd_una + rwnd).saturating_sub(snd_nxt),
            buf: (snd_una + sndbuf).saturating_sub(snd_nxt),
        }
    }

    /// Some new data could go (before the congestion window and SWS avoidance are applied).
    pub fn any(&self) -> bool {
        self.app > 0 && self.rwnd > 0 && self.buf > 0
    }
}

/// The next new segment, or why none goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewData {
    /// Send this many bytes.
    Segment(u64),
    /// Nothing now.
    Hold {
        /// A zero (or sub-MSS) window with nothing outstanding: the persist timer must probe it
        /// (RFC 9293 §3.8.6.1); it doubles as the SWS override timer.
        persist: bool,
        /// The application has data but no window or buffer lets any go (the rate sampler marks
        /// the flow application-limited).
        app_limited: bool,
    },
}

/// NextSeg() rule 2 (RFC 6675 §4): new data, one full segment at most. Sender SWS avoidance
/// (RFC 9293 §3.8.6.2.1): no small segment unless it ends the data.
pub fn next_new(smss: u32, room: Room, nothing_outstanding: bool) -> NewData {
    let smss = smss as u64;
    let len = smss.min(room.app).min(room.rwnd).min(room.buf);
    if len == 0 || (len < smss && len < room.app) {
        return NewData::Hold {
            persist: room.app > 0 && room.rwnd < smss && nothing_outstanding,
            app_limited: room.app > 0 && len == 0,
        };
    }
    NewData::Segment(len)
}

/// Limited transmit (RFC 3042 §2): on each of the first two duplicate ACKs, new data may go
/// out if the outstanding data (FlightSize, snd_nxt − snd_una) stays within cwnd plus one
/// segment per duplicate ACK so far — one new segment per duplicate ACK. Where the pipe
/// already leaves out what the duplicate ACK SACKed (RFC 6675, Linux's in-flight count in
/// the Disorder state), the pipe rule releases that same segment and this adds nothing;
/// without SACK (FlightSize unchanged by a duplicate ACK) this is what releases it. FreeBSD
/// states it the same way in FlightSize (`snd_cwnd = snd_nxt − snd_una + t_dupacks·maxseg`).
/// (Measured on this machine's kernel, scripts/linux-6/limited-transmit.pkt: one segment
/// per duplicate ACK; the model used to add this allowance on top of the SACK pipe and sent
/// two.)
///
/// `open`: neither in recovery nor in the loss state after a timeout.
#[allow(clippy::too_many_arguments)]
pub fn limited_transmit_allows(
    enabled: bool,
    open: bool,
    dupacks: u32,
    dupthresh: u32,
    flight_size: u64,
    len: u64,
    cwnd: u64,
    smss: u32,
) -> bool {
    enabled
        && open
        && dupacks > 0
        && dupacks < dupthresh
        && flight_size + len <= cwnd + (dupacks.min(2) as u64) * smss as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    #[test]
    fn test_room_from_windows() {
        let r = Room::new(1000, 3000, Some(3500), 4000, 10_000);
        assert_eq!(
            r,
            Room {
                app: 500,
                rwnd: 2000,
                buf: 8000
            }
        );
        assert!(r.any());
        let open_ended = Room::new(0, 0, None, 0, 10_000);
        assert_eq!(open_ended.app, u64::MAX);
        assert!(!open_ended.any(), "zero window");
        // Beyond the window already (it shrank): no room, not an underflow.
        assert_eq!(Room::new(0, 5000, None, 4000, 10_000).rwnd, 0);
    }

    #[test]
    fn test_next_new_full_segment() {
        let r = Room::new(0, 0, None, 64_000, 64_000);
        assert_eq!(next_new(MSS, r, true), NewData::Segment(1000));
    }

    #[test]
    fn test_next_new_sws_avoidance_holds_small_segment() {
        // A 600-byte window with more data to send: hold, and probe if nothing is outstanding.
        let r = Room::new(0, 0, None, 600, 64_000);
        let held = NewData::Hold {
            persist: true,
            app_limited: false,
        };
        assert_eq!(next_new(MSS, r, true), held);
        let r = Room::new(0, 400, None, 1000, 64_000);
        let held = NewData::Hold {
            persist: false,
            app_limited: false,
        };
        assert_eq!(
            next_new(MSS, r, false),
            held,
            "data outstanding: its ACK reopens"
        );
    }

    #[test]
    fn test_next_new_last_small_segment_goes() {
        let r = Room::new(0, 0, Some(300), 64_000, 64_000);
        assert_eq!(next_new(MSS, r, true), NewData::Segment(300));
    }

    #[test]
    fn test_next_new_zero_window_or_no_data() {
        let r = Room::new(0, 0, None, 0, 64_000);
        let held = NewData::Hold {
            persist: true,
            app_limited: true,
        };
        assert_eq!(next_new(MSS, r, true), held);
        let r = Room::new(0, 5000, Some(5000), 64_000, 64_000);
        let done = NewData::Hold {
            persist: false,
            app_limited: false,
        };
        assert_eq!(next_new(MSS, r, true), done, "all data sent");
        // The send buffer full: application-limited, no probe (the window is open).
        let r = Room::new(0, 8000, None, 64_000, 8000);
        let held = NewData::Hold {
            persist: false,
            app_limited: true,
        };
        assert_eq!(next_new(MSS, r, false), held);
    }

    #[test]
    fn test_disorder_limited_transmit_one_segment_per_dupack() {
        let cwnd = 4000;
        // Four segments out (FlightSize = cwnd): the first duplicate ACK allows a fifth...
        assert!(limited_transmit_allows(
            true, true, 1, 3, 4000, 1000, cwnd, MSS
        ));
        // ...but not a sixth until the second duplicate ACK.
        assert!(!limited_transmit_allows(
            true, true, 1, 3, 5000, 1000, cwnd, MSS
        ));
        assert!(limited_transmit_allows(
            true, true, 2, 3, 5000, 1000, cwnd, MSS
        ));
        assert!(!limited_transmit_allows(
            true, true, 2, 3, 6000, 1000, cwnd, MSS
        ));
    }

    #[test]
    fn test_limited_transmit_not_without_dupacks_at_dupthresh_or_in_recovery() {
        assert!(!limited_transmit_allows(
            true, true, 0, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            true, true, 3, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            true, false, 1, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            false, true, 1, 3, 4000, 1000, 4000, MSS
        ));
    }
}
