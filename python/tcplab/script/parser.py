"""Parser for the packetdrill subset tcplab's behaviour scripts use.

Grammar (packetdrill's, reduced; syntax learned from packetdrill's README, not copied)::

    line    := time ( syscall | segment | assert )
    time    := '*' | ['+'] NUM ['~' ['+'] NUM]       seconds; '+' relative to the previous line
    syscall := NAME '(' args ')' '=' INT [ERRNO ['(' text ')']]
    segment := ('<' | '>') FLAGS [SEQ ':' SEQ '(' LEN ')'] ['ack' N] ['win' N]
               ['<' option {',' option} '>']
    option  := 'nop' | 'eol' | 'sackOK' | 'mss' N | 'wscale' N | 'sack' (A ':' B)+
             | 'TS' 'val' N 'ecr' N
    assert  := '%{' 'assert' VAR OP INT { (';' | newline) 'assert' VAR OP INT } '}%'

Comments are ``//`` to end of line and ``/* ... */``. Every error is a :class:`ScriptError`
naming the file, the line, the offending token and what was expected.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

__all__ = [
    "ASSERT_VARS",
    "SYSCALLS",
    "Assertion",
    "Event",
    "Option",
    "ScriptError",
    "Segment",
    "Syscall",
    "parse_file",
    "parse_script",
]

# System calls the runners implement, with their argument count (packetdrill's C prototypes).
SYSCALLS: dict[str, int] = {
    "socket": 3,
    "bind": 3,
    "listen": 2,
    "accept": 3,
    "connect": 3,
    "write": 3,
    "setsockopt": 5,
    "getsockopt": 5,
    "close": 1,
    "shutdown": 2,
    "read": 3,
}

# TCP_INFO fields an assertion may read; aliases map to the canonical name (linux/tcp.h tcp_info).
ASSERT_VARS: dict[str, str] = {
    "tcpi_snd_cwnd": "cwnd",
    "tcpi_cwnd": "cwnd",
    "tcpi_snd_ssthresh": "ssthresh",
    "tcpi_ssthresh": "ssthresh",
    "tcpi_rto": "rto",
    "tcpi_retransmits": "retransmits",
    "tcpi_ca_state": "ca_state",
    "tcpi_unacked": "unacked",
}

# Symbolic values accepted on the right of an assertion (linux/tcp.h enum tcp_ca_state).
CA_STATES = {
    "TCP_CA_Open": 0,
    "TCP_CA_Disorder": 1,
    "TCP_CA_CWR": 2,
    "TCP_CA_Recovery": 3,
    "TCP_CA_Loss": 4,
}

OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}

FLAG_CHARS = "SFPRU.EW"
MAX_U32 = 2**32 - 1


class ScriptError(UserError, ValueError):
    """A malformed script; the message reads ``FILE:LINE: near 'TOKEN': problem; expected ...``."""

    def __init__(self, path: str, line: int, token: str, message: str) -> None:
        self.path, self.line, self.token = path, line, token
        shown = token if len(token) <= 40 else token[:37] + "..."
        super().__init__(f"{path}:{line}: near {shown!r}: {message}")


@dataclass(frozen=True)
class Option:
    """One TCP option: ``kind`` is nop/eol/sackOK/mss/wscale/sack/TS; ``values`` its numbers."""

    kind: str
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Segment:
    """A TCP segment, inbound (``<``, injected) or outbound (``>``, expected from the local stack).

    Sequence numbers are relative to each side's ISN, as in packetdrill. ``None`` means "not given"
    (an outbound segment then matches any value).
    """

    inbound: bool
    flags: str
    start: int | None
    end: int | None
    length: int | None
    ack: int | None
    win: int | None
    options: tuple[Option, ...] | None


@dataclass(frozen=True)
class Syscall:
    """``name(args) = ret [ERRNO]``; args are raw text pieces (``...`` means "whatever")."""

    name: str
    args: tuple[str, ...]
    ret: int
    errno: str | None


@dataclass(frozen=True)
class Assertion:
    """``assert tcpi_X OP value``; ``var`` is the canonical name from :data:`ASSERT_VARS`."""

    var: str
    source: str
    op: str
    value: int

    def check(self, actual: int) -> bool:
        return OPS[self.op](actual, self.value)


@dataclass(frozen=True)
class Event:
    """One script line: its time in seconds (absolute after resolving ``+``) and what happens."""

    path: str
    line: int
    time: float | None  # None for '*' (any time)
    time_end: float | None  # end of a 'a~b' window, else None
    action: Segment | Syscall | tuple[Assertion, ...]
    text: str = field(compare=False, default="")


_NUM = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_TIME = re.compile(
    r"^(\*|\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:~\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?)(?=\s|$)"
)


def _strip_comments(text: str, path: str) -> str:
    """Blank out comments, keeping line numbers (newlines inside block comments survive)."""
    out: list[str] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ScriptError(path, line, "/*", "comment never closed; expected '*/'")
            out.append("\n" * text.count("\n", i, j))
            line += text.count("\n", i, j)
            i = j + 2
        else:
            if c == "\n":
                line += 1
            out.append(c)
            i += 1
    return "".join(out)


def _int(tok: str, path: str, line: int, what: str, hi: int = MAX_U32) -> int:
    if not tok.isdigit() or not tok.isascii():
        raise ScriptError(path, line, tok, f"expected {what} (a non-negative integer)")
    v = int(tok)
    if v > hi:
        raise ScriptError(path, line, tok, f"{what} {v} is out of range; expected at most {hi}")
    return v


def _parse_time(tok: str, prev: float, path: str, line: int) -> tuple[float | None, float | None]:
    if tok == "*":
        return None, None

    def one(t: str, base: float) -> float:
        rel = t.startswith("+")
        v = float(t[1:] if rel else t)
        return base + v if rel else v

    if "~" in tok:
        a, b = tok.split("~", 1)
        t0 = one(a, prev)
        t1 = one(b, t0) if b.startswith("+") else float(b)
        if not t1 < 1e9:
            raise ScriptError(path, line, tok, "time is too large; expected seconds below 1e9")
        if t1 < t0:
            raise ScriptError(
                path, line, tok, f"time window ends ({t1:g}s) before it starts ({t0:g}s)"
            )
        return t0, t1
    t = one(tok, prev)
    if not t < 1e9:
        raise ScriptError(path, line, tok, "time is too large; expected seconds below 1e9")
    if t < prev - 1e-12:
        raise ScriptError(
            path, line, tok, f"time {t:g}s goes backwards (previous line at {prev:g}s)"
        )
    return t, None


def _parse_options(body: str, path: str, line: int) -> tuple[Option, ...]:
    opts: list[Option] = []
    if not body.strip():
        return ()
    for part in body.split(","):
        words = part.split()
        if not words:
            raise ScriptError(
                path,
                line,
                part or ",",
                "empty TCP option; expected nop, mss N, sackOK, wscale N, sack A:B, TS val N ecr N",
            )
        kind, rest = words[0], words[1:]
        if kind in ("nop", "eol", "sackOK"):
            if rest:
                raise ScriptError(path, line, rest[0], f"option {kind} takes no value")
            opts.append(Option(kind))
        elif kind == "mss":
            if len(rest) != 1:
                raise ScriptError(path, line, part.strip(), "expected 'mss N'")
            opts.append(Option(kind, (_int(rest[0], path, line, "MSS", 65535),)))
        elif kind == "wscale":
            if len(rest) != 1:
                raise ScriptError(path, line, part.strip(), "expected 'wscale N'")
            opts.append(Option(kind, (_int(rest[0], path, line, "window scale", 14),)))
        elif kind == "sack":
            if not rest:
                raise ScriptError(path, line, part.strip(), "expected 'sack A:B [C:D ...]'")
            vals: list[int] = []
            for blk in rest:
                a, sep, b = blk.partition(":")
                if not sep:
                    raise ScriptError(path, line, blk, "expected a SACK block 'A:B'")
                vals += [
                    _int(a, path, line, "SACK block start"),
                    _int(b, path, line, "SACK block end"),
                ]
            opts.append(Option(kind, tuple(vals)))
        elif kind == "TS":
            if len(rest) != 4 or rest[0] != "val" or rest[2] != "ecr":
                raise ScriptError(path, line, part.strip(), "expected 'TS val N ecr N'")
            opts.append(
                Option(
                    kind, (_int(rest[1], path, line, "TS val"), _int(rest[3], path, line, "TS ecr"))
                )
            )
        else:
            raise ScriptError(
                path,
                line,
                kind,
                "unknown TCP option; expected nop, eol, mss, sackOK, wscale, sack or TS",
            )
    return tuple(opts)


_SEQ = re.compile(r"^([0-9]+):([0-9]+)\(([0-9]+)\)$")


def _parse_segment(rest: str, path: str, line: int) -> Segment:
    inbound = rest[0] == "<"
    body = rest[1:].strip()
    options: tuple[Option, ...] | None = None
    lt = body.find("<")
    if lt >= 0:
        if not body.endswith(">"):
            raise ScriptError(
                path,
                line,
                body[lt:],
                "TCP options must be written '<opt,opt,...>' at the end of the line",
            )
        options = _parse_options(body[lt + 1 : -1], path, line)
        body = body[:lt]
    words = body.split()
    if not words:
        raise ScriptError(
            path,
            line,
            rest,
            "expected TCP flags after '<' or '>' (e.g. 'S', 'S.', '.', 'P.', 'F.', 'R')",
        )
    flags = words[0]
    bad = [c for c in flags if c not in FLAG_CHARS]
    if bad or len(set(flags)) != len(flags):
        raise ScriptError(
            path, line, flags, f"bad TCP flags; expected a combination of {FLAG_CHARS!r}, each once"
        )
    start = end = length = ack = win = None
    i = 1
    if i < len(words) and words[i][:1].isdigit():
        m = _SEQ.match(words[i])
        if not m:
            raise ScriptError(path, line, words[i], "expected a sequence range 'START:END(LEN)'")
        start, end, length = (int(g) for g in m.groups())
        if start > MAX_U32 or end > MAX_U32:
            raise ScriptError(path, line, words[i], "sequence number out of 32-bit range")
        if (end - start) % (MAX_U32 + 1) != length:
            raise ScriptError(
                path, line, words[i], f"length {length} does not equal END-START = {end - start}"
            )
        i += 1
    while i < len(words):
        key = words[i]
        if key not in ("ack", "win"):
            raise ScriptError(
                path, line, key, "unexpected word; expected 'ack N', 'win N' or '<options>'"
            )
        if i + 1 >= len(words):
            raise ScriptError(path, line, key, f"'{key}' needs a number after it")
        if key == "ack":
            ack = _int(words[i + 1], path, line, "ack number")
        else:
            win = _int(words[i + 1], path, line, "window", 65535)
        i += 2
    if ack is not None and "." not in flags:
        raise ScriptError(
            path, line, flags, "segment has 'ack N' but its flags lack '.' (the ACK flag)"
        )
    if inbound and start is None and "R" not in flags:
        # packetdrill lets only outbound segments omit the range; injected ones need numbers.
        raise ScriptError(
            path, line, rest.strip(), "an inbound segment needs a sequence range 'START:END(LEN)'"
        )
    return Segment(inbound, flags, start, end, length, ack, win, options)


def _split_args(text: str, path: str, line: int) -> tuple[str, ...]:
    args: list[str] = []
    depth, cur, quote = 0, [], False
    for ch in text:
        if ch == '"':
            quote = not quote
        if not quote and ch in "[{(":
            depth += 1
        elif not quote and ch in "]})":
            depth -= 1
            if depth < 0:
                raise ScriptError(path, line, ch, "unbalanced bracket in system call arguments")
        if ch == "," and depth == 0 and not quote:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if quote or depth:
        raise ScriptError(path, line, text, "unclosed quote or bracket in system call arguments")
    last = "".join(cur).strip()
    if last or args:
        args.append(last)
    return tuple(args)


_CALL = re.compile(
    r"^([A-Za-z_][A-Za-z0-9_]*)\((.*)\)\s*=\s*(-?[0-9]+)\s*(?:([A-Z][A-Z0-9_]*)\s*(?:\(.*\))?)?\s*$",
    re.S,
)


def _parse_syscall(rest: str, path: str, line: int) -> Syscall:
    name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
    if not name:
        raise ScriptError(path, line, rest.split()[0], "expected a system call, '<', '>' or '%{'")
    if name.group(0) not in SYSCALLS:
        from ..errors import nearest

        hint = nearest(name.group(0), SYSCALLS)
        raise ScriptError(
            path,
            line,
            name.group(0),
            f"unknown system call; expected one of {', '.join(SYSCALLS)}"
            + (f" (did you mean {hint!r}?)" if hint else ""),
        )
    m = _CALL.match(rest)
    if not m:
        raise ScriptError(path, line, rest, f"expected '{name.group(0)}(ARGS) = RESULT [ERRNO]'")
    call, argtext, ret, errno = m.groups()
    args = _split_args(argtext, path, line)
    if len(args) != SYSCALLS[call]:
        raise ScriptError(path, line, call, f"takes {SYSCALLS[call]} arguments, got {len(args)}")
    r = int(ret)
    if r < -1 or r > MAX_U32:
        raise ScriptError(
            path, line, ret, "result out of range; expected -1 or a non-negative integer"
        )
    if (r == -1) != (errno is not None):
        raise ScriptError(
            path,
            line,
            ret,
            "a result of -1 needs an errno name after it (e.g. '= -1 EINPROGRESS'), "
            "and only -1 may have one",
        )
    return Syscall(call, args, r, errno)


_ASSERT = re.compile(r"^assert\s+([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|<=|>=|<|>)\s*([A-Za-z_0-9]+)$")


def _parse_asserts(body: str, path: str, line: int) -> tuple[Assertion, ...]:
    out: list[Assertion] = []
    for stmt in re.split(r"[;\n]", body):
        stmt = stmt.strip()
        if not stmt:
            continue
        m = _ASSERT.match(stmt)
        if not m:
            raise ScriptError(
                path,
                line,
                stmt,
                "expected 'assert tcpi_VAR OP VALUE' with OP one of == != < <= > >=",
            )
        var, op, val = m.groups()
        if var.startswith("tcpi."):
            var = "tcpi_" + var[5:]
        if var not in ASSERT_VARS:
            raise ScriptError(
                path,
                line,
                var,
                f"unknown TCP_INFO variable; expected one of {', '.join(ASSERT_VARS)}",
            )
        value = CA_STATES[val] if val in CA_STATES else _int(val, path, line, "value")
        out.append(Assertion(ASSERT_VARS[var], var, op, value))
    if not out:
        raise ScriptError(
            path, line, "%{", "empty %{ }% block; expected at least one 'assert tcpi_VAR OP VALUE'"
        )
    return tuple(out)


def parse_script(text: str, path: str = "<script>") -> list[Event]:
    """Parse script ``text``; times resolve to absolute seconds. Raises :class:`ScriptError`."""
    if not isinstance(text, str):
        raise ScriptError(path, 0, type(text).__name__, "script text must be a string")
    clean = _strip_comments(text, path)
    lines = clean.split("\n")
    events: list[Event] = []
    prev = 0.0
    i = 0
    while i < len(lines):
        lineno = i + 1
        raw = lines[i]
        stripped = raw.strip()
        i += 1
        if not stripped:
            continue
        if stripped.startswith("--"):
            # packetdrill command-line options in a script header (--tolerance_usecs=...): ignored
            continue
        m = _TIME.match(stripped)
        if not m:
            tok = stripped.split()[0]
            raise ScriptError(
                path,
                lineno,
                tok,
                "expected a time at the start of the line ('0', '+0.1', '0.2~0.3' or '*')",
            )
        tok = m.group(1)
        try:
            t0, t1 = _parse_time(tok, prev, path, lineno)
        except (ValueError, OverflowError) as e:
            raise ScriptError(path, lineno, tok, f"bad time: {e}") from None
        rest = stripped[m.end() :].strip()
        if not rest:
            raise ScriptError(
                path,
                lineno,
                tok,
                "nothing after the time; expected a system call, '<', '>' or '%{'",
            )
        if rest.startswith("%{"):
            body = rest[2:]
            while "}%" not in body:
                if i >= len(lines):
                    raise ScriptError(
                        path, lineno, "%{", "assertion block never closed; expected '}%'"
                    )
                body += "\n" + lines[i]
                i += 1
            inner, _, after = body.partition("}%")
            if after.strip():
                raise ScriptError(path, lineno, after.strip(), "unexpected text after '}%'")
            action: Segment | Syscall | tuple[Assertion, ...] = _parse_asserts(inner, path, lineno)
        elif rest[0] in "<>":
            action = _parse_segment(rest, path, lineno)
        else:
            action = _parse_syscall(rest, path, lineno)
        events.append(Event(path, lineno, t0, t1, action, stripped))
        if t0 is not None:
            prev = t0
    return events


def parse_file(path: str | Path) -> list[Event]:
    """Read and parse one script file; unreadable files raise :class:`ScriptError` too."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScriptError(str(p), 0, p.name, f"cannot read script: {e}") from None
    return parse_script(text, str(p))


#: Sysctls a script may set in its header (``--sysctl=NAME=VALUE``, packetdrill-style).
#: Linux's (run by both engines) and XNU's/BSD's `net.inet.tcp.*` (the simulator's macOS
#: stretch-ACK knobs, script/sim.py SYSCTL_KNOBS; the kernel engine refuses them).
SYSCTL_PREFIXES = ("net.ipv4.tcp_", "net.core.default_qdisc", "net.inet.tcp.")


#: Script header options the simulator reads (``--NAME=VALUE``), besides ``--sysctl``: properties
#: of the path the script describes that no sysctl sets. ``--peer_local=1``: the remote end is on
#: a directly attached subnet (XNU ``TF_LOCAL``; knob ``peer_local``); ``--route_rtt=US`` and
#: ``--route_rttvar=US``: the route to it carries these cached metrics, in µs (BSD ``rmx_rtt``,
#: ``rmx_rttvar`` in RTM_RTTUNIT, as ``route change -rtt``; knobs ``route_rtt``, ``route_rttvar``).
SIM_OPTIONS = ("peer_local", "route_rtt", "route_rttvar")


def header_options(path: str) -> dict[str, str]:
    """The :data:`SIM_OPTIONS` header lines of a script (``--peer_local=1``), by name."""
    out: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for raw in lines:
        s = raw.strip()
        if not s.startswith("--"):
            continue
        name, eq, value = s[2:].partition("=")
        if name.strip() in SIM_OPTIONS:
            out[name.strip()] = value.strip() if eq else "1"
    return out


def header_sysctls(path: str) -> dict[str, str]:
    """``--sysctl=NAME=VALUE`` header lines of a script (packetdrill-style options lines)."""
    out: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s.startswith("--sysctl"):
            continue
        body = s[len("--sysctl") :].lstrip("= ")
        name, eq, value = body.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise UserError(f"{path}:{n}: near {s!r}: expected '--sysctl=NAME=VALUE'")
        if not name.startswith(SYSCTL_PREFIXES):
            raise UserError(
                f"{path}:{n}: near {name!r}: only net.ipv4.tcp_* (Linux) and net.inet.tcp.* "
                "(XNU, simulator only) sysctls may be set by a script"
            )
        out[name] = value
    return out
