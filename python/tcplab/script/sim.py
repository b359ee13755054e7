"""Run a behaviour script against a simulated personality (issue 14).

The script drives the remote side; the local socket is the simulator's TCP sender of stack NAME
(``tcplab._core.ScriptSender``: the sender code of crates/tcplab-sim, fed one segment at a time in
virtual time). Matching and the run loop are shared with the kernel engine (:mod:`.match`).

Two shapes. Active open (the model's sender, ``_core.ScriptSender``): ``socket`` /
``setsockopt`` / ``connect``, the handshake, then ``write`` calls whose bytes the sender has from
the moment the connection opens (the sender has no application queue, so all writes of a script
are summed and given at connect). Passive open (the model's data receiver, the iperf-server
endpoint ``_core.ScriptReceiver``): ``listen``, an injected SYN, then data from the script; the
receiver answers with its ACK policy (quick-ACK, delayed ACK, SACK). It never sends data, has no
congestion state (assertions fail) and its application reads at once (``read`` is a no-op).
Assertions read TCP_INFO-like values: cwnd in segments, unacked = segments sent and not
cumulatively acknowledged (Linux ``packets_out``), ssthresh in segments (2147483647 when unset,
Linux ``TCP_INFINITE_SSTHRESH``), rto in microseconds, ca_state as Linux names it (the sender's
``ca_state()``: Open, Disorder, CWR, Recovery, Loss), retransmits = RTO expirations (Linux
``icsk_retransmits`` approximated).
"""

from __future__ import annotations

import json

from ..errors import UserError
from .match import (
    DEFAULT_TOLERANCE,
    DEVICE_GSO_MAX_SEGS,
    FIN,
    PSH,
    SYN,
    LineResult,
    ScriptResult,
    inbound_seg,
    run_events,
)
from .parser import Event, Segment, Syscall, header_options, header_sysctls

__all__ = ["DEFAULT_TOLERANCE", "LineResult", "ScriptResult", "run_sim"]

LOCAL_ISN = 1_000_000  # local (simulated) ISN; script sequence numbers are relative to it
REMOTE_ISN = 0  # the script side's ISN: the model acks 1 after the handshake (tcp/sender/)
INFINITE_SSTHRESH = 0x7FFFFFFF
NS = 1_000_000_000


#: What a script's ``--sysctl`` header means for the model: the knobs it sets (ip-sysctl.rst).
SYSCTL_KNOBS = {
    "net.ipv4.tcp_early_retrans": lambda v: {"tlp": int(v) >= 3},
    "net.ipv4.tcp_syn_linear_timeouts": lambda v: {"syn_linear_timeouts": int(v)},
    "net.ipv4.tcp_timestamps": lambda v: {"timestamps": int(v) != 0},
    "net.ipv4.tcp_sack": lambda v: {"sack": int(v) != 0},
    "net.ipv4.tcp_window_scaling": lambda v: {"window_scaling": int(v) != 0},
    "net.ipv4.tcp_frto": lambda v: {"frto": int(v) != 0},
    # XNU (macOS) sysctls of the stretch-ACK rules (receiver/stretch.rs).
    "net.inet.tcp.rcvsspktcnt": lambda v: {"stretch_ack_wait": int(v)},
    "net.inet.tcp.maxseg_unacked": lambda v: {"stretch_ack_segments": int(v)},
    # XNU's values for a peer on a local subnet (TF_LOCAL; knob peer_local): tcp_TCPTV_MIN (ms)
    # and ss_fltsz_local (segments).
    "net.inet.tcp.rtt_min": lambda v: {"min_rto_local": int(v) * 1_000_000},
    "net.inet.tcp.local_slowstart_flightsize": lambda v: {"initial_window_local": int(v)},
}


def option_knobs(path: str) -> dict:
    """The model knobs the script's simulator-only header options set (``--peer_local=1``:
    knob ``peer_local``, the peer on a directly attached subnet, XNU ``TF_LOCAL``;
    ``--route_rtt=US``, ``--route_rttvar=US``: the route's cached metrics in µs)."""
    out: dict = {}
    for name, value in header_options(path).items():
        try:
            n = int(value)
        except ValueError:
            raise UserError(f"{path}: --{name}={value}: expected an integer") from None
        out[name] = n != 0 if name == "peer_local" else n * 1_000
    return out


def sysctl_knobs(path: str) -> dict:
    """The model knobs the script's ``--sysctl`` header lines set; a sysctl the model has no
    knob for is an error naming the file, the sysctl and what is supported."""
    out: dict = {}
    for name, value in header_sysctls(path).items():
        conv = SYSCTL_KNOBS.get(name)
        if conv is None:
            raise UserError(
                f"{path}: --sysctl={name}={value}: the simulator has no knob for {name}; "
                f"supported: {', '.join(sorted(SYSCTL_KNOBS))} (or run it with --engine kernel)"
            )
        try:
            out.update(conv(value))
        except ValueError:
            raise UserError(f"{path}: --sysctl={name}={value}: expected an integer") from None
    return out


class SimEngine:
    """The :class:`.match.Engine` over one simulated endpoint in virtual time: the sender
    (active open, ``connect``) or the receiver (passive open, ``listen``)."""

    remote_isn = REMOTE_ISN
    data_before_write = True

    def __init__(self, stack: str, writes: int, sysctls: dict | None = None) -> None:
        from .. import stacks

        st = stacks.get(stack)
        # The device the scripts describe is the kernel runner's TUN, whose gso_max_segs is 1
        # (kernel.py): every GSO buffer is one segment, which Linux never defers.
        device = {"gso_max_segs": DEVICE_GSO_MAX_SEGS}
        self.knobs = dict(st.knob_values()) | device | (sysctls or {})
        self.cca = st.cca
        self.params = {cca: st.params_for(cca) for cca in st.cca_params}
        self.stack = stack
        self.writes = writes
        self.passive = False
        self.tx = None  # ScriptSender after connect(), or ScriptReceiver after listen()
        self.local_isn = LOCAL_ISN  # the receiver's ISN is learnt from its SYN-ACK
        self.closed = False
        self.held_fin: tuple | None = None
        self.pending: list[tuple[float, tuple]] = []  # emitted, not yet matched
        self.now = 0.0

    def emit(self, t: float, segs: list) -> None:
        for s in segs:
            if s[2] & SYN and self.local_isn is None:
                self.local_isn = s[0]
            if s[2] & FIN and not self.closed:
                # The model's sender is a sized flow that closes once it has sent the bytes
                # it was given; a script's socket closes only on close()/shutdown(). Until
                # then its FIN is not on the wire: a bare FIN is held until close(), a FIN on
                # data is cleared (and a bare FIN held in its place).
                self.held_fin = (s[0] + s[4], s[1], s[2] & ~PSH, s[3], 0, *s[5:])
                if s[4] == 0:
                    continue
                s = (s[0], s[1], s[2] & ~FIN, *s[3:])
            self.pending.append((t, s))

    def advance(self, until: float, first: bool = False) -> None:
        """Fire the sender's timers due up to ``until`` (virtual seconds)."""
        while self.tx is not None:
            at = self.tx.poll_at()
            if at is None or at / NS > until + 1e-12:
                break
            self.emit(at / NS, self.tx.on_timer(at))
            self.now = max(self.now, at / NS)
            if first and self.pending:
                return
        self.now = max(self.now, until)

    def inject(self, t: float, seg: Segment) -> str:
        if self.tx is None:
            return "inbound segment before connect() or listen()"
        if self.local_isn is None and seg.ack is not None and "S" not in seg.flags:
            return "inbound ACK before the local side sent its SYN-ACK: its ISN is unknown"
        local = self.local_isn or 0
        self.emit(t, self.tx.on_packet(round(t * NS), inbound_seg(seg, local, REMOTE_ISN)))
        return ""

    def info(self) -> dict[str, int]:
        if self.tx is None or self.passive:
            return {}  # the receiver model has no congestion state
        cwnd, ssth, rto, _rtx, _inflight, _rec, smss, timeouts = self.tx.info()
        ca_state, outstanding = self.tx.state()
        return {
            "cwnd": cwnd // smss,
            "ssthresh": INFINITE_SSTHRESH if ssth >= 2**62 else ssth // smss,
            "rto": rto // 1000,
            "retransmits": timeouts,
            "ca_state": ca_state,
            "unacked": -(-outstanding // smss),
        }

    def syscall(self, a: Syscall, t: float) -> str:
        if a.name in ("close", "shutdown"):
            self.closed = True
            if self.held_fin is not None:
                self.pending.append((t, self.held_fin))
                self.held_fin = None
            return ""
        if a.name in ("socket", "bind", "getsockopt", "read"):
            return ""
        if a.name == "setsockopt":
            opt = a.args[2]
            val = a.args[3].strip("[]\"' ")
            if opt == "TCP_CONGESTION":
                self.cca = val
            elif opt in ("SO_SNDBUF", "SO_RCVBUF") and val.isdigit():
                knob = "sndbuf" if opt == "SO_SNDBUF" else "rcvbuf"
                self.knobs[knob] = int(val)
                # A set receive buffer is a configured window, as a scenario's `window`.
                from ..stacks import rules

                rules.configured_window(self.knobs, {knob: int(val)})
            return ""
        if a.name == "connect":
            from .. import _core

            try:
                # The personality's parameters for the algorithm in use (its TOML's
                # [cca_params.<cca>]), as a simulation's flow of that stack gets them.
                self.tx = _core.ScriptSender(
                    json.dumps(self.knobs),
                    self.cca,
                    max(self.writes, 0),
                    1500,
                    LOCAL_ISN,
                    round(t * NS),
                    json.dumps(self.params.get(self.cca, {})),
                )
            except ValueError as e:
                return f"cannot build stack {self.stack!r}: {e}"
            return ""
        if a.name == "write":
            if self.passive:
                return "write(): the simulator's receiver model sends no data"
            return "" if self.tx is not None else "write() before connect()"
        if a.name == "listen":
            from .. import _core

            try:
                self.tx = _core.ScriptReceiver(json.dumps(self.knobs), 1500)
            except ValueError as e:
                return f"cannot build stack {self.stack!r}: {e}"
            self.passive, self.local_isn = True, None
            return ""
        if a.name == "accept":
            return "" if self.passive and self.local_isn is not None else "accept(): no connection"
        return f"{a.name}() is not supported by the simulator runner"


def run_sim(
    events: list[Event],
    path: str,
    stack: str = "linux-6",
    tolerance: float = DEFAULT_TOLERANCE,
    trace: bool = False,
) -> ScriptResult:
    """Run parsed ``events`` on the simulator; stops at the first failing line, as packetdrill."""
    writes = sum(
        e.action.ret for e in events if isinstance(e.action, Syscall) and e.action.name == "write"
    )
    engine = SimEngine(stack, writes, sysctl_knobs(path) | option_knobs(path))
    return run_events(engine, events, path, stack, tolerance, trace)
