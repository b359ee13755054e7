"""Run a behaviour script against a simulated personality (issue 14).

The script drives the remote side; the local socket is the simulator's TCP sender of stack NAME
(``tcplab._core.ScriptSender``: the sender code of crates/tcplab-sim, fed one segment at a time in
virtual time). Like packetdrill (its README, "tolerance_usecs", default 4 ms), an outbound segment
matches when it leaves within the tolerance of the script's time and its fields agree.

Supported shape (the sender is the active opener): ``socket`` / ``setsockopt`` / ``connect``, the
handshake, then ``write`` calls whose bytes the sender has from the moment the connection opens
(the sender has no application queue yet, so a write later than the handshake is reported as
unsupported). Field comparison rules, and where they deviate from packetdrill:

- flags must be equal, except PSH, which the model sets on every data segment;
- ``win`` and TCP options of outbound segments are compared only when the script gives them;
  options compare by kind and the MSS/wscale values (the model does not lay out NOPs);
- assertions read TCP_INFO-like values: cwnd and unacked in segments, ssthresh in segments
  (2147483647 when unset, Linux ``TCP_INFINITE_SSTHRESH``), rto in microseconds, ca_state 3 in
  recovery else 0, retransmits = RTO expirations (Linux ``icsk_retransmits`` approximated).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .parser import Event, Option, Segment, Syscall

__all__ = ["DEFAULT_TOLERANCE", "LineResult", "ScriptResult", "run_sim"]

DEFAULT_TOLERANCE = 0.004  # seconds; packetdrill's default --tolerance_usecs=4000

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
O_MSS, O_WS, O_SACK, O_TS = 0x01, 0x02, 0x04, 0x08
LOCAL_ISN = 1_000_000  # local (simulated) ISN; script sequence numbers are relative to it
REMOTE_ISN = 0  # the script side's ISN: the model acks 1 after the handshake (sender.rs)
INFINITE_SSTHRESH = 0x7FFFFFFF
NS = 1_000_000_000


@dataclass
class LineResult:
    line: int
    ok: bool
    text: str
    detail: str = ""


@dataclass
class ScriptResult:
    path: str
    stack: str
    lines: list[LineResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.lines) and all(r.ok for r in self.lines)

    def failure(self) -> LineResult | None:
        return next((r for r in self.lines if not r.ok), None)


def _flags_text(f: int) -> str:
    s = "".join(c for bit, c in ((SYN, "S"), (FIN, "F"), (PSH, "P"), (RST, "R")) if f & bit)
    return s + ("." if f & ACK else "")


def _flags_bits(text: str) -> int:
    bits = 0
    for c, b in (("S", SYN), ("F", FIN), ("P", PSH), ("R", RST), (".", ACK)):
        if c in text:
            bits |= b
    return bits


def _seg_text(t: float, seg: tuple) -> str:
    seq, ack, flags, wnd, payload, opts, mss, ws, _tv, _te, sack = seg
    rel = (seq - LOCAL_ISN) % 2**32
    parts = [f"{t:.6f} > {_flags_text(flags)} {rel}:{(rel + payload) % 2**32}({payload})"]
    if flags & ACK:
        parts.append(f"ack {(ack - REMOTE_ISN) % 2**32}")
    parts.append(f"win {wnd}")
    o = []
    if opts & O_MSS:
        o.append(f"mss {mss}")
    if opts & O_SACK:
        o.append("sackOK")
    if opts & O_TS:
        o.append("TS")
    if opts & O_WS:
        o.append(f"wscale {ws}")
    o += [f"sack {(a - REMOTE_ISN) % 2**32}:{(b - REMOTE_ISN) % 2**32}" for a, b in sack]
    if o:
        parts.append("<" + ",".join(o) + ">")
    return " ".join(parts)


def _opt(opts: tuple[Option, ...] | None, kind: str) -> Option | None:
    return next((o for o in opts or () if o.kind == kind), None)


def _inbound(seg: Segment, ts_now: int) -> tuple:
    flags = _flags_bits(seg.flags)
    opts = mss = ws = tv = te = 0
    sack: list[tuple[int, int]] = []
    for o in seg.options or ():
        if o.kind == "mss":
            opts |= O_MSS
            mss = o.values[0]
        elif o.kind == "wscale":
            opts |= O_WS
            ws = o.values[0]
        elif o.kind == "sackOK":
            opts |= O_SACK
        elif o.kind == "TS":
            opts |= O_TS
            tv, te = o.values
        elif o.kind == "sack":
            v = o.values
            sack += [
                ((v[i] + LOCAL_ISN) % 2**32, (v[i + 1] + LOCAL_ISN) % 2**32)
                for i in range(0, len(v), 2)
            ]
    seq = ((seg.start or 0) + REMOTE_ISN) % 2**32
    ack = ((seg.ack or 0) + LOCAL_ISN) % 2**32 if seg.ack is not None else 0
    return (seq, ack, flags, seg.win or 0, seg.length or 0, opts, mss, ws, tv, te, sack)


def _compare(exp: Segment, seg: tuple) -> list[str]:
    seq, ack, flags, wnd, payload, opts, mss, ws, _tv, _te, _sack = seg
    bad = []
    if (_flags_bits(exp.flags) | PSH) != (flags | PSH):
        bad.append(f"flags {_flags_text(flags)} (expected {exp.flags})")
    rel = (seq - LOCAL_ISN) % 2**32
    if exp.start is not None and (exp.start, exp.length) != (rel, payload):
        want = f"{exp.start}:{exp.end}({exp.length})"
        bad.append(f"seq {rel}:{(rel + payload) % 2**32}({payload}) (expected {want})")
    if exp.ack is not None and (ack - REMOTE_ISN) % 2**32 != exp.ack:
        bad.append(f"ack {(ack - REMOTE_ISN) % 2**32} (expected {exp.ack})")
    if exp.win is not None and wnd != exp.win:
        bad.append(f"win {wnd} (expected {exp.win})")
    if exp.options is not None:
        for kind, bit in (("mss", O_MSS), ("wscale", O_WS), ("sackOK", O_SACK), ("TS", O_TS)):
            o = _opt(exp.options, kind)
            if (o is not None) != bool(opts & bit):
                bad.append(f"option {kind} {'missing' if o else 'present'}")
            elif o is not None and kind == "mss" and o.values[0] != mss:
                bad.append(f"mss {mss} (expected {o.values[0]})")
            elif o is not None and kind == "wscale" and o.values[0] != ws:
                bad.append(f"wscale {ws} (expected {o.values[0]})")
    return bad


class _Run:
    def __init__(self, path: str, stack: str, tolerance: float) -> None:
        from .. import stacks

        st = stacks.get(stack)
        self.knobs = dict(st.knob_values())
        self.cca = st.cca
        self.path, self.stack, self.tol = path, stack, tolerance
        self.tx = None
        self.pending: list[tuple[float, tuple]] = []  # emitted, not yet matched
        self.now = 0.0
        self.bytes = 0

    def emit(self, t: float, segs: list) -> None:
        self.pending += [(t, s) for s in segs]

    def advance(self, until: float) -> None:
        """Fire the sender's timers due up to ``until`` (virtual seconds)."""
        while self.tx is not None:
            at = self.tx.poll_at()
            if at is None or at / NS > until + 1e-12:
                break
            self.emit(at / NS, self.tx.on_timer(at))
            self.now = max(self.now, at / NS)
        self.now = max(self.now, until)

    def info(self) -> dict[str, int]:
        if self.tx is None:
            return {}
        cwnd, ssth, rto, _rtx, inflight, rec, smss, timeouts = self.tx.info()
        return {
            "cwnd": cwnd // smss,
            "ssthresh": INFINITE_SSTHRESH if ssth >= 2**62 else ssth // smss,
            "rto": rto // 1000,
            "retransmits": timeouts,
            "ca_state": 3 if rec else 0,
            "unacked": -(-inflight // smss),
        }


def run_sim(
    events: list[Event], path: str, stack: str = "linux-6", tolerance: float = DEFAULT_TOLERANCE
) -> ScriptResult:
    """Run parsed ``events``; stops at the first failing line, as packetdrill does."""
    r = _Run(path, stack, tolerance)
    res = ScriptResult(path, stack)
    writes = sum(
        e.action.ret for e in events if isinstance(e.action, Syscall) and e.action.name == "write"
    )

    def fail(e: Event, detail: str) -> ScriptResult:
        res.lines.append(LineResult(e.line, False, e.text, detail))
        return res

    for e in events:
        t = e.time if e.time is not None else r.now
        a = e.action
        if isinstance(a, Segment) and not a.inbound:
            lo, hi = (
                (t - r.tol, (e.time_end or t) + r.tol)
                if e.time is not None
                else (r.now, float("inf"))
            )
            if not r.pending:
                r.advance(min(hi, r.now + 3600))
            if not r.pending:
                return fail(e, f"expected {e.text!r} but nothing was sent by {min(hi, r.now):.6f}s")
            at, seg = r.pending.pop(0)
            bad = _compare(a, seg)
            if not lo <= at <= hi:
                bad.insert(0, f"sent at {at:.6f}s, expected {t:.6f}s ±{r.tol * 1000:g} ms")
            if bad:
                return fail(e, "actual: " + _seg_text(at, seg) + "; " + "; ".join(bad))
            res.lines.append(LineResult(e.line, True, e.text))
            r.now = max(r.now, at)
            continue
        r.advance(t)
        # Data the model sent at the handshake belongs to the script's write() (see module doc).
        is_write = isinstance(a, Syscall) and a.name == "write"
        if r.pending and not is_write:
            at, seg = r.pending[0]
            return fail(e, f"unexpected outbound segment before this line: {_seg_text(at, seg)}")
        if isinstance(a, Segment):
            if r.tx is None:
                return fail(
                    e, "inbound segment before connect(): only the active-open shape is supported"
                )
            r.emit(t, r.tx.on_packet(round(t * NS), _inbound(a, 0)))
        elif isinstance(a, Syscall):
            err = _syscall(r, a, t, writes)
            if err:
                return fail(e, err)
        else:
            got = r.info()
            if not got:
                return fail(e, "assertion before connect(): no socket state yet")
            bad = [
                f"{x.source} = {got[x.var]} (expected {x.op} {x.value})"
                for x in a
                if not x.check(got[x.var])
            ]
            if bad:
                return fail(e, "; ".join(bad))
        res.lines.append(LineResult(e.line, True, e.text))
    return res


def _syscall(r: _Run, a: Syscall, t: float, writes: int) -> str:
    if a.name in ("socket", "bind", "close", "shutdown", "getsockopt", "read"):
        return ""
    if a.name == "setsockopt":
        opt = a.args[2]
        val = a.args[3].strip("[]\"' ")
        if opt == "TCP_CONGESTION":
            r.cca = val
        elif opt in ("SO_SNDBUF", "SO_RCVBUF") and val.isdigit():
            r.knobs["sndbuf" if opt == "SO_SNDBUF" else "rcvbuf"] = int(val)
        return ""
    if a.name == "connect":
        from .. import _core

        try:
            r.tx = _core.ScriptSender(
                json.dumps(r.knobs), r.cca, max(writes, 0), 1500, LOCAL_ISN, round(t * NS)
            )
        except ValueError as e:
            return f"cannot build stack {r.stack!r}: {e}"
        return ""
    if a.name == "write":
        if r.tx is None:
            return "write() before connect()"
        return ""
    if a.name in ("listen", "accept"):
        return f"{a.name}(): the passive-open shape is not supported by the simulator runner yet"
    return f"{a.name}() is not supported by the simulator runner"
