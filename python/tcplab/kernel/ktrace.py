"""The kernel's own TCP tracepoints during a kernel run (``--ktrace``).

TCP_INFO sampled every few milliseconds (kernel/sampler.py) cannot show *why* a window stopped
growing or a flow left slow start; Linux's tracepoints in the ``tcp`` group can, one record per
event, from inside the stack (Documentation/trace/events.rst; the events' fields are in
``/sys/kernel/tracing/events/tcp/<event>/format``). A run with ``--ktrace EVENT[,EVENT...]``
records them per flow and end: every received segment with the socket's cwnd, ssthresh, srtt
and windows (``tcp_probe``), every receive-buffer autotuning step with what it measured
(``tcp_rcvbuf_grow``, Linux ≥ 6.16: the RTT estimate, bytes copied, the previous
``rcvq_space.space``, rcvbuf and window clamp), every ``tcp_rcv_space_adjust`` call, every
congestion-state change and every retransmitted segment.

Isolation: the events are enabled in a tracefs *instance* of the run's own
(``instances/tcplab-<run id>``, its own ring buffer; Documentation/trace/ftrace.rst
"Instances"), never in the global buffer another user may be reading, and filtered on the run's
ports. The instance is removed when the run ends, on error too; ``tcplab kernel-cleanup``
removes those of runs that crashed. Times are taken on the instance's ``mono`` clock
(CLOCK_MONOTONIC, the clock of the run's time zero; µs in the text output) and reported in ns
from the run's time zero. A ring buffer that filled up loses the oldest events: the count is
reported (``lost``), and a run with losses says so; raise ``buffer_kb`` (per CPU).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EngineError

__all__ = [
    "EVENTS",
    "KTrace",
    "cleanup_instances",
    "parse",
    "per_flow",
    "tracefs_root",
]

#: The events a run can record, with what each says (the kernel's tcp trace group).
EVENTS: dict[str, str] = {
    "tcp_probe": "every segment received in ESTABLISHED: cwnd, ssthresh, srtt, snd/rcv windows",
    "tcp_rcvbuf_grow": "receive-buffer autotuning grew (Linux >= 6.16): rtt_us, copied, space",
    "tcp_rcv_space_adjust": "every call of the receive-buffer autotuning (after an app read)",
    "tcp_cong_state_set": "congestion state changes (0 Open 1 Disorder 2 CWR 3 Recovery 4 Loss)",
    "tcp_retransmit_skb": "every retransmitted segment",
}

#: Per-CPU ring buffer of the run's instance (KiB): a 30-s, 100 Mbit/s run with tcp_probe at
#: both ends writes about 500 k events of ~180 bytes.
DEFAULT_BUFFER_KB = 65536

INSTANCE_PREFIX = "tcplab-"

_LINE = re.compile(
    r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[\d+\]\s+\S+\s+(?P<ts>\d+\.\d+):\s+(?P<ev>\w+):\s(?P<rest>.*)$"
)
_KV = re.compile(r"(\w+)=(\S+)")
_ADDR_PORT = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<v4>[\d.]+)):(?P<port>\d+)$")


def tracefs_root() -> Path | None:
    """Where tracefs is mounted, if anywhere (/sys/kernel/tracing, or the debugfs path)."""
    for p in (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing")):
        if (p / "instances").is_dir():
            return p
    return None


def _value(v: str) -> int | str:
    """A field's value: integers (decimal or 0x hex) as int, anything else as text."""
    try:
        return int(v, 0)
    except ValueError:
        return v


def parse(text: str) -> list[tuple[int, str, dict[str, int | str]]]:
    """Records of a tracefs ``trace`` file: (time in ns on the instance's clock, event, fields).

    Fields are the ``key=value`` pairs of the event's line; ``tcp_probe``'s ``src``/``dest``
    (address:port) also give ``sport`` and ``dport``. Comment and unparsable lines are skipped.
    """
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        sec, _, frac = m.group("ts").partition(".")
        t_ns = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        fields: dict[str, int | str] = {k: _value(v) for k, v in _KV.findall(m.group("rest"))}
        for key, port in (("src", "sport"), ("dest", "dport")):
            am = _ADDR_PORT.match(str(fields.get(key, "")))
            if am and port not in fields:
                fields[port] = int(am.group("port"))
        out.append((t_ns, m.group("ev"), fields))
    return out


def lost_events(text: str) -> int:
    """Events the ring buffer overwrote (the header's ``entries-in-buffer/entries-written``)."""
    m = re.search(r"entries-in-buffer/entries-written:\s*(\d+)/(\d+)", text)
    return int(m.group(2)) - int(m.group(1)) if m else 0


def per_flow(
    records: Iterable[tuple[int, str, dict[str, int | str]]],
    t0_ns: int,
    flows: Sequence[tuple[str, int, int]],
) -> dict[str, dict[str, dict[str, dict[str, list]]]]:
    """Records grouped as ``{flow: {end: {event: {"t_ns": [...], field: [...]}}}}``.

    *flows* are (name, client port, server port); a record belongs to a flow's sending end
    (``snd``, the client) when its local port (``sport``) is the client port, to its receiving
    end (``rcv``) when it is the server port. Times are ns from *t0_ns*; only integer fields are
    kept (addresses and pointers are left out), columns aligned per event (``None`` where a
    record lacks the field)."""
    ends: dict[int, tuple[str, str, int]] = {}
    for name, cport, sport in flows:
        ends[cport] = (name, "snd", sport)
        ends[sport] = (name, "rcv", cport)
    out: dict[str, dict[str, dict[str, dict[str, list]]]] = {}
    for t_ns, ev, f in records:
        local, remote = f.get("sport"), f.get("dport")
        hit = ends.get(local) if isinstance(local, int) else None
        if hit is None or hit[2] != remote:
            continue
        name, end, _ = hit
        cols = out.setdefault(name, {}).setdefault(end, {}).setdefault(ev, {"t_ns": []})
        n = len(cols["t_ns"])
        cols["t_ns"].append(t_ns - t0_ns)
        for k, v in f.items():
            if k in ("sport", "dport", "sock_cookie", "mark") or not isinstance(v, int):
                continue
            col = cols.setdefault(k, [None] * n)
            col.append(v)
        for col in cols.values():
            if len(col) < n + 1:
                col.append(None)
    return out


@dataclass
class KTrace:
    """The run's tracefs instance: :meth:`start` before time zero, :meth:`stop` after the run
    (or use it as a context manager, which always removes the instance)."""

    events: Sequence[str]
    run_id: str
    ports: Sequence[int]
    buffer_kb: int = DEFAULT_BUFFER_KB
    root: Path | None = None
    text: str = ""
    lost: int = 0
    _dir: Path | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        unknown = [e for e in self.events if e not in EVENTS]
        if unknown:
            raise EngineError(
                f"--ktrace {','.join(self.events)}: unknown event(s) {', '.join(unknown)}; "
                f"choose from {', '.join(EVENTS)}"
            )
        if not self.events:
            raise EngineError("--ktrace: name at least one event, e.g. --ktrace tcp_probe")

    def start(self) -> None:
        root = self.root or tracefs_root()
        if root is None:
            raise EngineError(
                "--ktrace: tracefs is not mounted (no /sys/kernel/tracing/instances); mount it "
                "with `mount -t tracefs nodev /sys/kernel/tracing` or run without --ktrace"
            )
        missing = [e for e in self.events if not (root / "events" / "tcp" / e).is_dir()]
        if missing:
            raise EngineError(
                f"--ktrace: this kernel ({os.uname().release}) has no tracepoint "
                f"{', '.join('tcp:' + e for e in missing)}; run without it"
            )
        d = root / "instances" / f"{INSTANCE_PREFIX}{self.run_id}"
        try:
            d.mkdir()
        except OSError as e:
            raise EngineError(f"--ktrace: cannot create the tracefs instance {d}: {e}") from e
        self._dir = d
        try:
            (d / "tracing_on").write_text("0")
            (d / "trace_clock").write_text("mono")
            (d / "buffer_size_kb").write_text(str(int(self.buffer_kb)))
            flt = " || ".join(f"sport == {p} || dport == {p}" for p in self.ports)
            for e in self.events:
                ed = d / "events" / "tcp" / e
                if flt:
                    (ed / "filter").write_text(flt)
                (ed / "enable").write_text("1")
            (d / "tracing_on").write_text("1")
        except OSError as e:
            self.close()
            raise EngineError(f"--ktrace: cannot set up the tracefs instance {d}: {e}") from e

    def stop(self) -> None:
        """Stop recording and read the buffer (kept in :attr:`text`, losses in :attr:`lost`)."""
        if self._dir is None:
            return
        with contextlib.suppress(OSError):
            (self._dir / "tracing_on").write_text("0")
        try:
            self.text = (self._dir / "trace").read_text(errors="replace")
        except OSError as e:
            raise EngineError(f"--ktrace: cannot read {self._dir / 'trace'}: {e}") from e
        self.lost = lost_events(self.text)

    def close(self) -> None:
        """Remove the instance (its events are disabled first, or the kernel refuses)."""
        d, self._dir = self._dir, None
        if d is not None:
            _remove_instance(d)

    def __enter__(self) -> KTrace:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def result(self, t0_ns: int, flows: Sequence[tuple[str, int, int]]) -> dict[str, Any]:
        """What the run's result keeps: the events per flow and end, and the losses."""
        return {
            "events": list(self.events),
            "lost": self.lost,
            "flows": per_flow(parse(self.text), t0_ns, flows),
        }


def _remove_instance(d: Path) -> None:
    with contextlib.suppress(OSError):
        (d / "tracing_on").write_text("0")
    ev_root = d / "events" / "tcp"
    for e in EVENTS:
        with contextlib.suppress(OSError):
            (ev_root / e / "enable").write_text("0")
    with contextlib.suppress(OSError):
        d.rmdir()


def cleanup_instances(alive: Iterable[str] = ()) -> list[str]:
    """Remove the tracefs instances of tcplab runs not in *alive* (run ids); their names."""
    root = tracefs_root()
    if root is None:
        return []
    keep = {f"{INSTANCE_PREFIX}{r}" for r in alive}
    removed = []
    for d in sorted((root / "instances").glob(f"{INSTANCE_PREFIX}*")):
        if d.name not in keep:
            _remove_instance(d)
            if not d.exists():
                removed.append(d.name)
    return removed
