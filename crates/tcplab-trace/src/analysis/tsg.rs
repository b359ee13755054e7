//! Graph data: what the analyzer reports, packet by packet, for time-sequence, RTT and
//! outstanding-data graphs. Sequence numbers are unwrapped to 64 bits and relative to the
//! direction's initial sequence number (the SYN is 0, the first data byte 1; without a SYN the
//! first byte seen is 1), as Wireshark's "relative sequence numbers" are. Times are nanoseconds
//! since the first packet of the capture.

/// A direction of a connection: A is the host that sent the first packet seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    AtoB = 0,
    BtoA = 1,
}

impl Dir {
    pub fn other(self) -> Dir {
        match self {
            Dir::AtoB => Dir::BtoA,
            Dir::BtoA => Dir::AtoB,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// "a2b" or "b2a", as tcptrace names directions.
    pub fn name(self) -> &'static str {
        match self {
            Dir::AtoB => "a2b",
            Dir::BtoA => "b2a",
        }
    }
}

/// How a segment is drawn in a time-sequence graph (tcptrace colours: data white/black,
/// retransmission red; we add window violations, zero-window probes and out-of-order fills).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegKind {
    Data = 0,
    Retransmission = 1,
    /// New data ending beyond the right edge (ACK + window) of the receiver's current window.
    WindowViolation = 2,
    ZeroWindowProbe = 3,
    /// Filled a hole below data already seen (typical at a receiver-side capture point).
    OutOfOrder = 4,
    Syn = 5,
    Fin = 6,
}

impl SegKind {
    pub fn name(self) -> &'static str {
        match self {
            SegKind::Data => "data",
            SegKind::Retransmission => "retransmission",
            SegKind::WindowViolation => "window_violation",
            SegKind::ZeroWindowProbe => "zero_window_probe",
            SegKind::OutOfOrder => "out_of_order",
            SegKind::Syn => "syn",
            SegKind::Fin => "fin",
        }
    }
}

/// Receives graph data as the analyzer produces it; only events inside the configured time
/// window arrive. All methods default to doing nothing. `dir` is always the direction whose data
/// (sequence space) the event belongs to, also for ACKs and SACKs, which travel the other way.
pub trait TsgSink {
    /// A segment occupying `[start, end)` of sequence space (SYN and FIN count one each).
    fn segment(
        &mut self,
        _conn: usize,
        _dir: Dir,
        _t_ns: u64,
        _start: i64,
        _end: i64,
        _kind: SegKind,
    ) {
    }
    /// A cumulative ACK and the right edge of the window it advertises (ack + scaled window).
    fn ack(&mut self, _conn: usize, _dir: Dir, _t_ns: u64, _ack: i64, _right_edge: i64) {}
    /// A SACK block, with whether it passed the validity checks.
    fn sack(&mut self, _conn: usize, _dir: Dir, _t_ns: u64, _left: i64, _right: i64, _valid: bool) {
    }
    /// An RTT sample (taken when the ACK arrived).
    fn rtt(&mut self, _conn: usize, _dir: Dir, _t_ns: u64, _rtt_ns: u64) {}
    /// Bytes sent and not yet acknowledged, after a send or an ACK.
    fn outstanding(&mut self, _conn: usize, _dir: Dir, _t_ns: u64, _bytes: i64) {}
}

/// A sink that drops everything (statistics only).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSink;

impl TsgSink for NoSink {}

/// Columnar series of one direction of one connection.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DirSeries {
    pub seg_t_ns: Vec<u64>,
    pub seg_start: Vec<i64>,
    pub seg_end: Vec<i64>,
    pub seg_kind: Vec<SegKind>,
    pub ack_t_ns: Vec<u64>,
    pub ack: Vec<i64>,
    pub win_edge: Vec<i64>,
    pub sack_t_ns: Vec<u64>,
    pub sack_left: Vec<i64>,
    pub sack_right: Vec<i64>,
    pub sack_valid: Vec<bool>,
    pub rtt_t_ns: Vec<u64>,
    pub rtt_ns: Vec<u64>,
    pub out_t_ns: Vec<u64>,
    pub outstanding: Vec<i64>,
}

/// A sink that keeps every event, per connection and direction.
#[derive(Debug, Default, Clone)]
pub struct SeriesSink {
    /// Indexed by connection, then [`Dir::index`].
    pub series: Vec<[DirSeries; 2]>,
}

impl SeriesSink {
    fn at(&mut self, conn: usize, dir: Dir) -> &mut DirSeries {
        if self.series.len() <= conn {
            self.series.resize_with(conn + 1, Default::default);
        }
        &mut self.series[conn][dir.index()]
    }
}

impl TsgSink for SeriesSink {
    fn segment(&mut self, conn: usize, dir: Dir, t: u64, start: i64, end: i64, kind: SegKind) {
        let s = self.at(conn, dir);
        s.seg_t_ns.push(t);
        s.seg_start.push(start);
        s.seg_end.push(end);
        s.seg_kind.push(kind);
    }

    fn ack(&mut self, conn: usize, dir: Dir, t: u64, ack: i64, edge: i64) {
        let s = self.at(conn, dir);
        s.ack_t_ns.push(t);
        s.ack.push(ack);
        s.win_edge.push(edge);
    }

    fn sack(&mut self, conn: usize, dir: Dir, t: u64, l: i64, r: i64, valid: bool) {
        let s = self.at(conn, dir);
        s.sack_t_ns.push(t);
        s.sack_left.push(l);
        s.sack_right.push(r);
        s.sack_valid.push(valid);
    }

    fn rtt(&mut self, conn: usize, dir: Dir, t: u64, rtt: u64) {
        let s = self.at(conn, dir);
        s.rtt_t_ns.push(t);
        s.rtt_ns.push(rtt);
    }

    fn outstanding(&mut self, conn: usize, dir: Dir, t: u64, bytes: i64) {
        let s = self.at(conn, dir);
        s.out_t_ns.push(t);
        s.outstanding.push(bytes);
    }
}
