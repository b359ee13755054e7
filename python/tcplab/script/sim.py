"""Run a behaviour script against a simulated personality (issue 14).

The script drives the remote side; the local socket is the simulator's TCP sender of stack NAME
(``tcplab._core.ScriptSender``: the sender code of crates/tcplab-sim, fed one segment at a time in
virtual time). Matching and the run loop are shared with the kernel engine (:mod:`.match`).

Supported shape (the sender is the active opener): ``socket`` / ``setsockopt`` / ``connect``, the
handshake, then ``write`` calls whose bytes the sender has from the moment the connection opens
(the sender has no application queue, so all writes of a script are summed and given at connect).
Assertions read TCP_INFO-like values: cwnd in segments, unacked = segments sent and not
cumulatively acknowledged (Linux ``packets_out``), ssthresh in segments (2147483647 when unset,
Linux ``TCP_INFINITE_SSTHRESH``), rto in microseconds, ca_state as Linux names it (the sender's
``ca_state()``: Open, Disorder, CWR, Recovery, Loss), retransmits = RTO expirations (Linux
``icsk_retransmits`` approximated).
"""

from __future__ import annotations

import json

from .match import DEFAULT_TOLERANCE, FIN, LineResult, ScriptResult, inbound_seg, run_events
from .parser import Event, Segment, Syscall

__all__ = ["DEFAULT_TOLERANCE", "LineResult", "ScriptResult", "run_sim"]

LOCAL_ISN = 1_000_000  # local (simulated) ISN; script sequence numbers are relative to it
REMOTE_ISN = 0  # the script side's ISN: the model acks 1 after the handshake (sender.rs)
INFINITE_SSTHRESH = 0x7FFFFFFF
NS = 1_000_000_000


class SimEngine:
    """The :class:`.match.Engine` over one simulated sender in virtual time."""

    local_isn = LOCAL_ISN
    remote_isn = REMOTE_ISN
    data_before_write = True

    def __init__(self, stack: str, writes: int) -> None:
        from .. import stacks

        st = stacks.get(stack)
        self.knobs = dict(st.knob_values())
        self.cca = st.cca
        self.stack = stack
        self.writes = writes
        self.tx = None
        self.closed = False
        self.pending: list[tuple[float, tuple]] = []  # emitted, not yet matched
        self.now = 0.0

    def emit(self, t: float, segs: list) -> None:
        for s in segs:
            if s[2] & FIN and not self.closed:
                # The model's sender is a sized flow that closes once it has sent the bytes
                # it was given; a script's socket closes only on close()/shutdown(). Until
                # then its FIN is not on the wire: a bare FIN is dropped, a FIN on data cleared.
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
            return "inbound segment before connect(): only the active-open shape is supported"
        self.emit(t, self.tx.on_packet(round(t * NS), inbound_seg(seg, LOCAL_ISN, REMOTE_ISN)))
        return ""

    def info(self) -> dict[str, int]:
        if self.tx is None:
            return {}
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
            return ""
        if a.name in ("socket", "bind", "getsockopt", "read"):
            return ""
        if a.name == "setsockopt":
            opt = a.args[2]
            val = a.args[3].strip("[]\"' ")
            if opt == "TCP_CONGESTION":
                self.cca = val
            elif opt in ("SO_SNDBUF", "SO_RCVBUF") and val.isdigit():
                self.knobs["sndbuf" if opt == "SO_SNDBUF" else "rcvbuf"] = int(val)
            return ""
        if a.name == "connect":
            from .. import _core

            try:
                self.tx = _core.ScriptSender(
                    json.dumps(self.knobs),
                    self.cca,
                    max(self.writes, 0),
                    1500,
                    LOCAL_ISN,
                    round(t * NS),
                )
            except ValueError as e:
                return f"cannot build stack {self.stack!r}: {e}"
            return ""
        if a.name == "write":
            return "" if self.tx is not None else "write() before connect()"
        if a.name in ("listen", "accept"):
            return f"{a.name}(): the passive-open shape is not supported by the simulator runner"
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
    return run_events(SimEngine(stack, writes), events, path, stack, tolerance, trace)
