"""Matching shared by every script engine (issue 14): the line-by-line run loop, the comparison of
an expected outbound segment with the one the local stack sent, and the result types.

An engine (the simulator's :mod:`.sim`, the real kernel's :mod:`.kernel`) supplies:

- ``local_isn`` / ``remote_isn``: the ISNs script sequence numbers are relative to (packetdrill's
  convention: the local side's numbers are relative to the local stack's ISN, the script side's to
  the ISN the script uses);
- ``advance(until, first)``: let time pass to ``until`` seconds of script time, collecting what the
  local stack sends in ``pending`` as ``(time, Seg)``; with ``first`` it may return as soon as a
  segment is pending;
- ``inject(t, seg)``, ``syscall(call, t)`` (returns an error text or ``""``), ``info()`` (the
  TCP_INFO-like variables, ``{}`` while there is no socket);
- ``data_before_write``: True when the engine's stack may send a write's data before the
  ``write`` line is reached (the simulator gets its bytes at connect time).

A Seg is the tuple ``(seq, ack, flags, wnd, payload, opts, mss, wscale, ts_val, ts_ecr, sack)``
with absolute sequence numbers, flag bits FIN..ACK and option bits O_MSS..O_TS below.

Like packetdrill (its README, ``--tolerance_usecs``, default 4 ms) an outbound segment matches
when it leaves within the tolerance of the script's time (or inside an ``a~b`` window) and its
fields agree: flags equal except PSH (the scripts do not test it: where a stack pushes depends on
its write and GSO buffers, which the scripts leave to the stack); sequence range and ack equal;
``win`` and
options compared only when the script gives them (options by kind, MSS and wscale by value, NOP
layout ignored). A segment nobody expected fails the next line; the run stops at the first
failing line, as packetdrill does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .parser import Event, Option, Segment, Syscall

__all__ = [
    "DEFAULT_TOLERANCE",
    "Engine",
    "LineResult",
    "ScriptResult",
    "compare",
    "inbound_seg",
    "run_events",
    "seg_text",
]

DEFAULT_TOLERANCE = 0.004  # seconds; packetdrill's default --tolerance_usecs=4000
#: Segments per GSO buffer of the device the scripts run over: the kernel runner sets its TUN's
#: ``gso_max_segs`` to this (kernel.py) and the simulator runner gives it to the model (sim.py).
DEVICE_GSO_MAX_SEGS = 1

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
O_MSS, O_WS, O_SACK, O_TS = 0x01, 0x02, 0x04, 0x08
M32 = 2**32


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
    #: with ``trace``: every segment the local stack sent, in script notation
    sent: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.lines) and all(r.ok for r in self.lines)

    def failure(self) -> LineResult | None:
        return next((r for r in self.lines if not r.ok), None)


class Engine(Protocol):
    local_isn: int
    remote_isn: int
    now: float
    pending: list[tuple[float, tuple]]
    data_before_write: bool

    def advance(self, until: float, first: bool = False) -> None: ...
    def inject(self, t: float, seg: Segment) -> str: ...
    def syscall(self, call: Syscall, t: float) -> str: ...
    def info(self) -> dict[str, int]: ...


def flags_text(f: int) -> str:
    s = "".join(c for bit, c in ((SYN, "S"), (FIN, "F"), (PSH, "P"), (RST, "R")) if f & bit)
    return s + ("." if f & ACK else "")


def flags_bits(text: str) -> int:
    bits = 0
    for c, b in (("S", SYN), ("F", FIN), ("P", PSH), ("R", RST), (".", ACK)):
        if c in text:
            bits |= b
    return bits


def seg_text(t: float, seg: tuple, local_isn: int, remote_isn: int) -> str:
    """An outbound Seg in script notation (relative numbers), for failure messages."""
    seq, ack, flags, wnd, payload, opts, mss, ws, _tv, _te, sack = seg
    rel = (seq - local_isn) % M32
    parts = [f"{t:.6f} > {flags_text(flags)} {rel}:{(rel + payload) % M32}({payload})"]
    if flags & ACK:
        parts.append(f"ack {(ack - remote_isn) % M32}")
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
    o += [f"sack {(a - remote_isn) % M32}:{(b - remote_isn) % M32}" for a, b in sack]
    if o:
        parts.append("<" + ",".join(o) + ">")
    return " ".join(parts)


def _opt(opts: tuple[Option, ...] | None, kind: str) -> Option | None:
    return next((o for o in opts or () if o.kind == kind), None)


def inbound_seg(seg: Segment, local_isn: int, remote_isn: int, ts_ecr: int = 0) -> tuple:
    """The Seg an inbound script line describes, in absolute numbers.

    ``ts_ecr`` replaces the script's TS ecr when non-zero (packetdrill maps ecr to the local
    stack's real TS val, which a script cannot know).
    """
    flags = flags_bits(seg.flags)
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
            if te and ts_ecr:
                te = ts_ecr
        elif o.kind == "sack":
            v = o.values
            sack += [
                ((v[i] + local_isn) % M32, (v[i + 1] + local_isn) % M32)
                for i in range(0, len(v), 2)
            ]
    seq = ((seg.start or 0) + remote_isn) % M32
    ack = ((seg.ack or 0) + local_isn) % M32 if seg.ack is not None else 0
    return (seq, ack, flags, seg.win or 0, seg.length or 0, opts, mss, ws, tv, te, sack)


def compare(exp: Segment, seg: tuple, local_isn: int, remote_isn: int) -> list[str]:
    """What differs between expected segment ``exp`` and the sent ``seg`` (empty: a match)."""
    seq, ack, flags, wnd, payload, opts, mss, ws, _tv, _te, _sack = seg
    bad = []
    if (flags_bits(exp.flags) | PSH) != (flags | PSH):
        bad.append(f"flags {flags_text(flags)} (expected {exp.flags})")
    rel = (seq - local_isn) % M32
    if exp.start is not None and (exp.start, exp.length) != (rel, payload):
        want = f"{exp.start}:{exp.end}({exp.length})"
        bad.append(f"seq {rel}:{(rel + payload) % M32}({payload}) (expected {want})")
    if exp.ack is not None and (ack - remote_isn) % M32 != exp.ack:
        bad.append(f"ack {(ack - remote_isn) % M32} (expected {exp.ack})")
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
        want = [(a, b) for o in exp.options if o.kind == "sack" for a, b in _pairs(o.values)]
        got = [((a - remote_isn) % M32, (b - remote_isn) % M32) for a, b in _sack]
        if want and want != got:
            bad.append(f"sack {got} (expected {want})")
    return bad


def _pairs(v: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(v[i], v[i + 1]) for i in range(0, len(v), 2)]


def run_events(
    eng: Engine, events: list[Event], path: str, label: str, tol: float, trace: bool = False
) -> ScriptResult:
    """Run parsed ``events`` on engine ``eng``; stops at the first failing line.

    With ``trace`` (a tool for writing scripts, never a pass): outbound lines are skipped and
    every segment the stack sends is recorded in ``sent`` instead of matched.
    """
    res = ScriptResult(path, label)
    if trace:
        return _trace(eng, events, res)

    def fail(e: Event, detail: str) -> ScriptResult:
        res.lines.append(LineResult(e.line, False, e.text, detail))
        return res

    def show(at: float, seg: tuple) -> str:
        return seg_text(at, seg, eng.local_isn, eng.remote_isn)

    for e in events:
        t = e.time if e.time is not None else eng.now
        a = e.action
        if isinstance(a, Segment) and not a.inbound:
            lo, hi = (
                (t - tol, (e.time_end or t) + tol)
                if e.time is not None
                else (eng.now, float("inf"))
            )
            if not eng.pending:
                eng.advance(min(hi, eng.now + 3600), True)
            if not eng.pending:
                return fail(
                    e, f"expected {e.text!r} but nothing was sent by {min(hi, eng.now):.6f}s"
                )
            at, seg = eng.pending.pop(0)
            bad = compare(a, seg, eng.local_isn, eng.remote_isn)
            if not lo <= at <= hi:
                bad.insert(0, f"sent at {at:.6f}s, expected {t:.6f}s ±{tol * 1000:g} ms")
            if bad:
                return fail(e, "actual: " + show(at, seg) + "; " + "; ".join(bad))
            res.lines.append(LineResult(e.line, True, e.text))
            eng.now = max(eng.now, at)
            continue
        eng.advance(t)
        is_write = isinstance(a, Syscall) and a.name == "write"
        if eng.pending and not (is_write and eng.data_before_write):
            at, seg = eng.pending[0]
            return fail(e, f"unexpected outbound segment before this line: {show(at, seg)}")
        if isinstance(a, Segment):
            err = eng.inject(t, a)
            if err:
                return fail(e, err)
        elif isinstance(a, Syscall):
            err = eng.syscall(a, t)
            if err:
                return fail(e, err)
        else:
            got = eng.info()
            if not got:
                return fail(e, "assertion before the socket exists")
            bad = [
                f"{x.source} = {got[x.var]} (expected {x.op} {x.value})"
                for x in a
                if not x.check(got[x.var])
            ]
            if bad:
                return fail(e, "; ".join(bad))
        res.lines.append(LineResult(e.line, True, e.text))
    return res


def _trace(eng: Engine, events: list[Event], res: ScriptResult) -> ScriptResult:
    def drain() -> None:
        res.sent += [seg_text(at, seg, eng.local_isn, eng.remote_isn) for at, seg in eng.pending]
        eng.pending.clear()

    last = 0.0
    for e in events:
        a = e.action
        if isinstance(a, Segment) and not a.inbound:
            continue
        t = e.time if e.time is not None else eng.now
        last = max(last, t)
        eng.advance(t)
        drain()
        res.sent.append(f"{t:.6f}   [line {e.line}] {e.text}")
        if isinstance(a, Segment):
            err = eng.inject(t, a)
        elif isinstance(a, Syscall):
            err = eng.syscall(a, t)
        else:
            err = "" if eng.info() else "no socket"
            res.sent.append(f"           info {eng.info()}")
        if err:
            res.sent.append(f"           error: {err}")
    end = max((e.time_end or e.time or 0.0) for e in events) if events else 0.0
    eng.advance(max(last, end) + 1.0)
    drain()
    return res
