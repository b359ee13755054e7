"""Scenario files: TOML → validated model → normalized config (docs/design.md §3).

The format is documented in docs/scenario-format.md; keep the two in sync. In short::

    name = "quickstart"          # top level: name, description, seed, duration, interval, trials,
    duration = "20s"             #            engine, record_changes
    stack = "linux-6"            # OS personality of every TCP host (python/tcplab/stacks)
    [path]                       # the dumbbell bottleneck r1 → r2 (+ optional [path.reverse])
    rate = "100Mbit"
    rtt = "50ms"
    [tcp]                        # TCP knob defaults for every TCP flow (_core.tcp_knobs())
    sack = true
    [[host]]                     # optional shared hosts
    [[flow]]                     # flows: tcp (default) or udp
    cca = "cubic"

:func:`load` reads and validates a scenario completely (raising :class:`ScenarioError` naming the
file, the field's dotted path, the bad value and what is allowed) and returns a :class:`Scenario`,
whose :meth:`Scenario.config` gives the normalized config of one trial.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import stacks as stacks_mod
from . import units
from .catalog import Catalog, ParamError, default_catalog
from .errors import ScenarioError, nearest
from .seeds import MAX_SEED
from .units import QueueSize, UnitError

__all__ = [
    "Flow",
    "Host",
    "PathModel",
    "Scenario",
    "apply_overrides",
    "load",
    "parse_override_value",
]

TOP_KEYS = (
    "name",
    "description",
    "seed",
    "duration",
    "interval",
    "trials",
    "engine",
    "record_changes",
    "capture",
    "path",
    "stack",
    "tcp",
    "host",
    "flow",
    "sweep",
    "report",
    "assume",
    "run",
)
RUN_KEYS = ("executor", "ray_address")
PATH_KEYS = (
    "rate",
    "rtt",
    "delay",
    "queue",
    "mtu",
    "loss",
    "access_rate",
    "access_delay",
    "host_queue",
    "reverse",
)
REVERSE_KEYS = ("rate", "queue", "loss")
HOST_KEYS = ("name", "side", "nic_rate", "ring", "access_rate", "access_delay")
FLOW_COMMON_KEYS = (
    "name",
    "kind",
    "direction",
    "src",
    "dst",
    "start",
    "start_jitter",
    "stop",
    "rtt",
)
FLOW_TCP_KEYS = (
    *FLOW_COMMON_KEYS,
    "bytes",
    "streams",
    "window",
    "sender_stack",
    "receiver_stack",
    "cca",
    "tcp",
    "receiver_tcp",
)
FLOW_UDP_KEYS = (*FLOW_COMMON_KEYS, "rate", "payload")
LOSS_MODELS = ("none", "bernoulli", "gilbert-elliott", "list")
ENGINES = ("sim", "kernel")
SIDES = ("left", "right")
DIRECTIONS = ("forward", "reverse")
ROUTERS = ("r1", "r2")  # r1 on the left, r2 on the right

DEFAULT_DURATION = "10s"
DEFAULT_INTERVAL = "1s"
DEFAULT_RTT = "100ms"
DEFAULT_QUEUE = "bdp"
DEFAULT_MTU = 1500
DEFAULT_ACCESS_DELAY = "0.1ms"
DEFAULT_HOST_QUEUE = "1000pkt"
DEFAULT_PAYLOAD = "1470B"
DEFAULT_CCA = "cubic"
#: The stack of every TCP flow's hosts unless `stack`, `sender_stack` or `receiver_stack` say
#: otherwise: the engine's knob defaults (python/tcplab/stacks/generic.toml).
DEFAULT_STACK = stacks_mod.GENERIC
ACCESS_RATE_FACTOR = 10
#: IPv4 (20 B) + UDP (8 B) headers: a UDP payload must fit the MTU with them (no fragmentation).
UDP_IP_HEADERS = 28
#: IPv4 minimum datagram size every host must accept (RFC 791) .. IPv4 maximum.
MTU_RANGE = (576, 65535)
#: Series rows per flow above which a scenario is refused (duration / interval).
MAX_SAMPLES = 10_000_000

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_NAME_RULE = "a name starting with a letter, then letters, digits, '_' or '-' (no dots)"
_SCENARIO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_MISSING: Any = object()


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True)
class PathModel:
    """The bottleneck and access defaults after validation (all base units)."""

    rate_bps: int
    rtt_ns: int
    delay_ns: int
    queue: QueueSize
    queue_limit: tuple[int | None, int | None]
    mtu: int
    loss: dict[str, Any]
    access_rate_bps: int
    access_delay_ns: int
    host_queue_limit: tuple[int | None, int | None]
    reverse_rate_bps: int
    reverse_queue: QueueSize
    reverse_queue_limit: tuple[int | None, int | None]
    reverse_loss: dict[str, Any]


@dataclass(frozen=True)
class Host:
    """An end host. ``auto`` hosts were created for one flow (``<flow>.snd`` / ``<flow>.rcv``)."""

    name: str
    side: str
    access_rate_bps: int
    access_delay_ns: int
    nic_rate_bps: int | None = None
    ring_pkts: int | None = None
    auto: bool = False

    @property
    def router(self) -> str:
        return ROUTERS[0] if self.side == "left" else ROUTERS[1]


@dataclass(frozen=True)
class Flow:
    """One expanded flow (one iperf stream); ``group`` is the [[flow]] table's name."""

    name: str
    group: str
    kind: str
    direction: str
    src: str
    dst: str
    start_ns: int
    stop_ns: int
    rtt_ns: int
    bytes: int | None = None
    cca: dict[str, Any] | None = None
    tcp: dict[str, Any] | None = None
    receiver_tcp: dict[str, Any] | None = None
    sender_stack: str | None = None
    receiver_stack: str | None = None
    rate_bps: int | None = None
    payload_bytes: int | None = None
    start_jitter_ns: int = 0

    def start_for(self, seed: int) -> int:
        """Start time in the trial with seed *seed*: ``start`` plus, with ``start_jitter``, a
        uniform draw from [0, start_jitter] ns keyed by the trial seed and the flow name
        (first 8 bytes of sha256(f"tcplab-start:{seed}:{name}") modulo start_jitter + 1)."""
        if not self.start_jitter_ns:
            return self.start_ns
        digest = hashlib.sha256(f"tcplab-start:{seed}:{self.name}".encode()).digest()
        return self.start_ns + int.from_bytes(digest[:8], "big") % (self.start_jitter_ns + 1)

    def to_config(self, seed: int = 0) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "group": self.group,
            "kind": self.kind,
            "src": self.src,
            "dst": self.dst,
            "start_ns": self.start_for(seed),
            "stop_ns": self.stop_ns,
        }
        if self.kind == "tcp":
            d["bytes"] = self.bytes
            d["cca"] = copy.deepcopy(self.cca)
            d["tcp"] = dict(self.tcp or {})
            # The receiving host's knobs, always written out (docs/design.md §3; they differ
            # from "tcp" when the receiver runs another stack or has [flow.receiver_tcp]).
            rtcp = self.receiver_tcp if self.receiver_tcp is not None else d["tcp"]
            d["receiver_tcp"] = dict(rtcp)
        else:
            d["rate_bps"] = self.rate_bps
            d["payload_bytes"] = self.payload_bytes
        return d


@dataclass
class Scenario:
    """A validated, expanded scenario. :meth:`config` yields the normalized config of one trial."""

    file: str
    name: str
    description: str
    seed: int
    duration_ns: int
    interval_ns: int
    trials: int
    engine: str
    record_changes: bool
    path: PathModel
    hosts: list[Host]
    flows: list[Flow]
    nodes: list[dict[str, Any]]
    links: list[dict[str, Any]]
    resolved: dict[str, Any] = field(repr=False)
    #: Links or hosts ("host:NAME") whose packets trial 0 records as pcap (see tcplab.capture).
    capture: tuple[str, ...] = ()
    #: ``[run]``: where trials run (tcplab.executors); never changes results.
    run_options: dict[str, str] = field(default_factory=dict)

    def config(self, seed: int) -> dict[str, Any]:
        """The normalized config (§3) of a trial whose seed is *seed*."""
        return {
            "seed": seed,
            "duration_ns": self.duration_ns,
            "interval_ns": self.interval_ns,
            "record_changes": self.record_changes,
            "nodes": copy.deepcopy(self.nodes),
            "links": copy.deepcopy(self.links),
            "flows": [f.to_config(seed) for f in self.flows],
        }

    @property
    def groups(self) -> list[str]:
        out: list[str] = []
        for f in self.flows:
            if f.group not in out:
                out.append(f.group)
        return out

    def resolved_toml(self) -> str:
        """The resolved scenario as TOML (every default written out; reproduces this run)."""
        import tomli_w

        header = (
            f"Resolved scenario '{self.name}' (from {self.file}), written by tcplab.\n"
            "Overrides (--set, --trials, --seed, --engine) are applied and constant defaults\n"
            "are written out; values derived from others (path delay, access rates and\n"
            "delays, flow RTTs, [path.reverse]) are computed from them as documented in\n"
            "docs/scenario-format.md. Running this file reproduces the run exactly."
        )
        comment = "".join(f"# {line}\n" for line in header.splitlines())
        return comment + "\n" + tomli_w.dumps(self.resolved)

    def topology_text(self) -> str:
        """A brief human-readable description of the expanded topology."""
        p = self.path
        h = units.human_rate
        d = units.human_duration
        lines = [
            f"scenario {self.name}: {len(self.flows)} flow(s), {self.trials} trial(s), seed "
            f"{self.seed}, duration {d(self.duration_ns)}, interval {d(self.interval_ns)}, "
            f"engine {self.engine}",
            f"  bottleneck r1->r2: {h(p.rate_bps)}, one-way delay {d(p.delay_ns)}, "
            f"queue {_show_limit(p.queue_limit)} ({_show_queue(p.queue)}), "
            f"loss {_show_loss(p.loss)}, mtu {p.mtu}",
            f"  bottleneck r2->r1: {h(p.reverse_rate_bps)}, "
            f"queue {_show_limit(p.reverse_queue_limit)} ({_show_queue(p.reverse_queue)}), "
            f"loss {_show_loss(p.reverse_loss)}",
            f"  base RTT {d(p.rtt_ns)}",
            "  hosts:",
        ]
        for host in self.hosts:
            extra = ""
            if host.nic_rate_bps is not None:
                extra += f", nic {h(host.nic_rate_bps)}"
            if host.ring_pkts is not None:
                extra += f", ring {host.ring_pkts} pkts"
            lines.append(
                f"    {host.name} ({host.side}, via {host.router}): "
                f"access {h(host.access_rate_bps)}, {d(host.access_delay_ns)}{extra}"
            )
        lines.append("  flows:")
        for f in self.flows:
            what = f"{f.kind} {f.cca['name']}" if f.kind == "tcp" and f.cca else f.kind
            if f.kind == "tcp" and (f.sender_stack, f.receiver_stack) != (DEFAULT_STACK,) * 2:
                what += f" [{f.sender_stack} -> {f.receiver_stack}]"
            if f.kind == "udp" and f.rate_bps is not None:
                what += f" {h(f.rate_bps)}"
            span = f"{d(f.start_ns)}..{d(f.stop_ns)}"
            if f.start_jitter_ns:
                span = f"{d(f.start_ns)} (+ up to {d(f.start_jitter_ns)})..{d(f.stop_ns)}"
            if f.bytes is not None:
                span += f", {units.format_bytes(f.bytes)}"
            lines.append(
                f"    {f.name} [{f.group}] {what}: {f.src} -> {f.dst} ({f.direction}), "
                f"RTT {d(f.rtt_ns)}, {span}"
            )
        return "\n".join(lines)


def _show_limit(limit: tuple[int | None, int | None]) -> str:
    pkts, nbytes = limit
    return f"{pkts} pkts" if pkts is not None else f"{nbytes} B"


def _show_queue(q: QueueSize) -> str:
    if q.kind == "bdp":
        return f"{float(q.amount):g} BDP"
    return "as given"


def _show_loss(loss: Mapping[str, Any]) -> str:
    if loss["model"] == "none":
        return "none"
    if loss["model"] == "bernoulli":
        return f"bernoulli p={loss['p']:g}"
    return (
        f"gilbert-elliott p_gb={loss['p_gb']:g} p_bg={loss['p_bg']:g} "
        f"loss_good={loss['loss_good']:g} loss_bad={loss['loss_bad']:g}"
    )


# ---------------------------------------------------------------------------------------------
# Reading with paths


class _Ctx:
    def __init__(self, file: str, origins: Mapping[str, str]) -> None:
        self.file = file
        self.origins = dict(origins)

    def origin(self, fld: str) -> str | None:
        for p, o in self.origins.items():
            if fld == p or fld.startswith(p + ".") or p.startswith(fld + "."):
                return o
        return None

    def error(
        self, fld: str, problem: str, value: Any = _MISSING, allowed: str | None = None
    ) -> ScenarioError:
        return ScenarioError(
            self.file,
            fld,
            problem,
            value=None if value is _MISSING else value,
            has_value=value is not _MISSING,
            allowed=allowed,
            origin=self.origin(fld),
        )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Table:
    """A TOML table being validated: unknown keys are errors; every read is recorded."""

    def __init__(
        self,
        ctx: _Ctx,
        data: Any,
        path: str,
        keys: Sequence[str],
        what: str,
        other_keys: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(data, dict):
            raise ctx.error(path, f"must be a table ({what})", data, allowed="a TOML table")
        self.ctx = ctx
        self.data = data
        self.path = path
        self.keys = keys
        self.resolved: dict[str, Any] = {}
        for k in data:
            if k in keys:
                continue
            if other_keys and k in other_keys:
                raise ctx.error(
                    _join(path, k),
                    f"not allowed here ({other_keys[k]})",
                    data[k],
                    allowed="keys " + ", ".join(keys),
                )
            near = nearest(k, keys)
            hint = f" (did you mean '{near}'?)" if near else ""
            raise ctx.error(
                _join(path, k), f"unknown key{hint}", allowed=f"keys of {what}: " + ", ".join(keys)
            )

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        return self.data.get(key, _MISSING)

    def field(self, key: str) -> str:
        return _join(self.path, key)

    def error(self, key: str, problem: str, allowed: str | None = None) -> ScenarioError:
        return self.ctx.error(self.field(key), problem, self.data.get(key, _MISSING), allowed)

    def take(
        self,
        key: str,
        conv: Callable[[Any], Any],
        *,
        default: Any = _MISSING,
        literal: Any = _MISSING,
        required: bool = False,
        allowed: str | None = None,
        record: bool = True,
    ) -> Any:
        """Read and convert *key*; *default* is returned (and *literal* recorded) when absent."""
        if key not in self.data:
            if required:
                raise self.ctx.error(self.field(key), "missing (required)", allowed=allowed)
            if literal is not _MISSING and record:
                self.resolved[key] = literal
            return default
        raw = self.data[key]
        try:
            value = conv(raw)
        except (UnitError, ParamError, _Invalid) as e:
            raise self.ctx.error(self.field(key), e.problem, raw, e.allowed) from None
        if record:
            self.resolved[key] = raw
        return value

    def ordered_resolved(self) -> dict[str, Any]:
        return {k: self.resolved[k] for k in self.keys if k in self.resolved}


class _Invalid(Exception):
    def __init__(self, problem: str, allowed: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.allowed = allowed


def _str(allowed: str = "a string") -> Callable[[Any], str]:
    def conv(v: Any) -> str:
        if not isinstance(v, str):
            raise _Invalid(f"is a {_tname(v)}, not a string", allowed)
        return v

    return conv


def _tname(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "table"
    if isinstance(v, list):
        return "array"
    return type(v).__name__


def _str_list(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _Invalid(
            f"is a {_tname(v)}, not a list of strings",
            'link or host names, e.g. ["bottleneck", "host:cubic.snd"]',
        )
    return list(v)


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _Invalid(f"is a {_tname(v)}, not a boolean", "true or false")
    return v


def _int(lo: int, hi: int | None = None, what: str = "") -> Callable[[Any], int]:
    allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer ≥ {lo}"
    if what:
        allowed += f" ({what})"

    def conv(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Invalid(f"is a {_tname(v)}, not an integer", allowed)
        if v < lo or (hi is not None and v > hi):
            raise _Invalid("is out of range", allowed)
        return v

    return conv


def _choice(options: Sequence[str]) -> Callable[[Any], str]:
    allowed = "one of " + ", ".join(repr(o) for o in options)

    def conv(v: Any) -> str:
        if not isinstance(v, str) or v not in options:
            near = nearest(v, options) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise _Invalid(f"is not a valid choice{hint}", allowed)
        return v

    return conv


def _name(v: Any) -> str:
    if not isinstance(v, str) or not _NAME_RE.match(v):
        raise _Invalid("is not a valid name", _NAME_RULE)
    return v


def _positive(parse: Callable[[Any], int], allowed: str) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        n = parse(v)
        if n <= 0:
            raise _Invalid("must be more than zero", allowed)
        return n

    return conv


_rate = _positive(units.parse_rate, units.RATE_EXAMPLE)
_duration = units.parse_duration
_pos_duration = _positive(units.parse_duration, units.DURATION_EXAMPLE)
_pos_bytes = _positive(units.parse_bytes, units.BYTES_EXAMPLE)


def _ring(v: Any) -> int:
    n = units.parse_packets(v)
    if n < 1:
        raise _Invalid("must be at least 1 packet", units.PACKETS_EXAMPLE)
    return n


def _fixed_queue(v: Any) -> QueueSize:
    q = units.parse_queue(v)
    if q.kind == "bdp":
        raise _Invalid(
            "a BDP multiple is not allowed here",
            "a packet count like '1000pkt' or a size like '4MB'",
        )
    return q


# ---------------------------------------------------------------------------------------------
# Loss models

_LOSS_ALLOWED = (
    "a probability like '0.5%' or 0.005 (Bernoulli), or a table {model = 'none'}, "
    "{model = 'bernoulli', p = ...} or {model = 'gilbert-elliott', p_gb = ..., p_bg = ..., "
    "loss_good = 0, loss_bad = 1} or {model = 'list', packets = [indices]}"
)


def _loss(ctx: _Ctx, path: str, v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        try:
            p = units.parse_probability(v)
        except UnitError as e:
            raise ctx.error(path, e.problem, v, _LOSS_ALLOWED) from None
        return {"model": "none"} if p == 0 else {"model": "bernoulli", "p": p}
    model = v.get("model", _MISSING)
    if model is _MISSING:
        raise ctx.error(_join(path, "model"), "missing (required)", allowed=_LOSS_ALLOWED)
    # The design's JSON spelling is gilbert_elliott; accept it too.
    if model == "gilbert_elliott":
        model = "gilbert-elliott"
    if not isinstance(model, str) or model not in LOSS_MODELS:
        near = nearest(model, LOSS_MODELS) if isinstance(model, str) else None
        hint = f" (did you mean '{near}'?)" if near else ""
        raise ctx.error(
            _join(path, "model"),
            f"unknown loss model{hint}",
            model,
            "one of " + ", ".join(repr(m) for m in LOSS_MODELS),
        )
    keys = {
        "none": ("model",),
        "bernoulli": ("model", "p"),
        "gilbert-elliott": ("model", "p_gb", "p_bg", "loss_good", "loss_bad"),
        "list": ("model", "packets"),
    }[model]
    t = _Table(ctx, v, path, keys, f"a {model} loss model")

    def prob(val: Any) -> float:
        return units.parse_probability(val)

    if model == "none":
        return {"model": "none"}
    if model == "bernoulli":
        return {"model": "bernoulli", "p": t.take("p", prob, required=True, allowed=_LOSS_ALLOWED)}
    if model == "list":

        def indices(val: Any) -> list[int]:
            allowed = "an array of packet indices (integers ≥ 0, 0 = the first packet offered)"
            if not isinstance(val, list) or any(
                isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in val
            ):
                raise _Invalid("is not a list of packet indices", allowed)
            return sorted(set(val))

        return {"model": "list", "packets": t.take("packets", indices, required=True)}
    return {
        "model": "gilbert_elliott",
        "p_gb": t.take("p_gb", prob, required=True, allowed="a probability (good → bad)"),
        "p_bg": t.take("p_bg", prob, required=True, allowed="a probability (bad → good)"),
        "loss_good": t.take("loss_good", prob, default=0.0),
        "loss_bad": t.take("loss_bad", prob, default=1.0),
    }


# ---------------------------------------------------------------------------------------------
# Overrides (--set a.b.c=VALUE)


def parse_override_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal when it parses as one (``true``, ``8``, ``0.7``,
    ``"x"``, ``{name = "cubic"}``), else the text as a string (``8MB``, ``reno``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def apply_overrides(
    doc: Mapping[str, Any], overrides: Iterable[str], file: str = "<scenario>"
) -> tuple[dict[str, Any], dict[str, str]]:
    """Apply ``FIELD=VALUE`` overrides to a copy of *doc*.

    FIELD is a dotted path; array tables (``flow``, ``host``) are addressed by 0-based index or by
    name: ``flow.0.cca=reno``, ``flow.cubic.window=8MB``, ``path.rate=1Gbit``. Missing tables on
    the way are created (``path.reverse.rate=...``); setting ``flow.X.cca.<param>`` when ``cca`` is
    a string turns it into a table. Returns the new document and a map from each override's
    canonical (index-based) path to its text, used to say where a bad value came from.
    """
    new = copy.deepcopy(dict(doc))
    origins: dict[str, str] = {}
    for item in overrides:
        where = f"--set {item}"
        if "=" not in item:
            raise ScenarioError(
                file, "", f"{where}: expected FIELD=VALUE", allowed="e.g. --set path.rate=1Gbit"
            )
        key, text = item.split("=", 1)
        key = key.strip()
        parts = key.split(".")
        if not key or any(not p for p in parts):
            raise ScenarioError(
                file, key, f"{where}: bad field path", allowed="a dotted path like flow.0.cca"
            )
        value = parse_override_value(text)
        node: Any = new
        canon: list[str] = []
        for j, part in enumerate(parts):
            last = j == len(parts) - 1
            here = ".".join(canon)
            if isinstance(node, list):
                idx = _resolve_item(node, part, here, file, where)
                canon.append(str(idx))
                if last:
                    if not isinstance(value, dict):
                        raise ScenarioError(
                            file,
                            ".".join(canon),
                            f"{where}: cannot replace a whole [[{here}]] table with a "
                            f"{_tname(value)}",
                            allowed=f"a field of it, e.g. {'.'.join(canon)}.name=...",
                        )
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                canon.append(part)
                if last:
                    node[part] = value
                    break
                if part not in node:
                    if part in ("flow", "host") and not here:
                        raise ScenarioError(
                            file,
                            part,
                            f"{where}: the scenario has no [[{part}]] tables to address",
                        )
                    node[part] = {}
                child = node[part]
                if part == "cca" and isinstance(child, str):
                    child = node[part] = {"name": child}
                if not isinstance(child, (dict, list)):
                    raise ScenarioError(
                        file,
                        ".".join(canon),
                        f"{where}: is a {_tname(child)}, so it has no field '{parts[j + 1]}'",
                    )
                node = child
        origins[".".join(canon)] = where
    return new, origins


def _resolve_item(items: list[Any], part: str, here: str, file: str, where: str) -> int:
    if part.isdigit():
        idx = int(part)
        if idx >= len(items):
            raise ScenarioError(
                file,
                f"{here}.{part}",
                f"{where}: there are only {len(items)} [[{here}]] tables",
                allowed=f"an index from 0 to {len(items) - 1} or a name",
            )
        return idx
    names = []
    for i, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        if name is None and here == "flow":
            name = f"flow{i}"
        names.append(name)
        if name == part:
            return i
    valid = [n for n in names if isinstance(n, str)]
    near = nearest(part, valid)
    hint = f" (did you mean '{near}'?)" if near else ""
    raise ScenarioError(
        file,
        f"{here}.{part}",
        f"{where}: no [[{here}]] named '{part}'{hint}",
        allowed="an index or one of " + ", ".join(repr(n) for n in valid),
    )


# ---------------------------------------------------------------------------------------------
# Loading


def load(
    source: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    *,
    overrides: Iterable[str] = (),
    trials: int | None = None,
    seed: int | None = None,
    engine: str | None = None,
    catalog: Catalog | None = None,
    file: str | None = None,
    origins: Mapping[str, str] | None = None,
) -> Scenario:
    """Read, override, validate and expand a scenario.

    *source* is a path to a TOML file, an already-parsed document (a mapping), or a Scenario (whose
    resolved document is used). *trials*, *seed*, *engine* replace the document's values (as the
    CLI's ``--trials`` etc. do). *catalog* defaults to the one of the built ``tcplab._core``.
    *file* names a parsed document in messages (and gives its default name); *origins* maps
    dotted fields to where their values came from (tcplab.sweep: ``sweep point 'rtt=50ms'``).
    """
    if isinstance(source, Scenario):
        doc: dict[str, Any] = copy.deepcopy(source.resolved)
        file = source.file
    elif isinstance(source, Mapping):
        doc = copy.deepcopy(dict(source))
        file = file if file is not None else "<scenario>"
    else:
        file = os.fspath(source)
        try:
            text = Path(file).read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise ScenarioError(file, "", "no such file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioError(file, "", f"cannot read the file ({e})") from None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(file, "", f"not valid TOML: {e}") from None
    doc, set_origins = apply_overrides(doc, overrides, file)
    origins = {**(origins or {}), **set_origins}
    for key, value, flag in (
        ("trials", trials, "--trials"),
        ("seed", seed, "--seed"),
        ("engine", engine, "--engine"),
    ):
        if value is not None:
            doc[key] = value
            origins[key] = f"{flag} {value}"
    if catalog is None:
        catalog = default_catalog()
        if doc.get("engine") == "kernel":
            # Kernel scenarios may use every CCA the running kernel offers (tcplab.kernel).
            try:
                from .kernel import kernel_catalog

                catalog = kernel_catalog()
            except Exception:
                pass
    default_name = Path(file).stem if not file.startswith("<") else "scenario"
    return _validate(_Ctx(file, origins), doc, catalog, default_name)


def _validate(ctx: _Ctx, doc: dict[str, Any], catalog: Catalog, default_name: str) -> Scenario:
    top = _Table(ctx, doc, "", TOP_KEYS, "a scenario")

    def scen_name(v: Any) -> str:
        if not isinstance(v, str) or not _SCENARIO_NAME_RE.match(v):
            raise _Invalid(
                "is not a valid scenario name",
                "letters, digits, '_', '-' and '.', starting with a letter or digit",
            )
        return v

    if not _SCENARIO_NAME_RE.match(default_name):
        default_name = "scenario"
    name = top.take("name", scen_name, default=default_name, literal=default_name)
    description = top.take("description", _str(), default="", literal="")
    seed = top.take("seed", _int(0, MAX_SEED), default=1, literal=1)
    duration = top.take(
        "duration",
        _pos_duration,
        default=units.parse_duration(DEFAULT_DURATION),
        literal=DEFAULT_DURATION,
    )
    interval = top.take(
        "interval",
        _pos_duration,
        default=units.parse_duration(DEFAULT_INTERVAL),
        literal=DEFAULT_INTERVAL,
    )
    if interval > duration:
        raise top.error(
            "interval",
            "is longer than the duration",
            f"at most duration = {units.format_duration(duration)}",
        )
    if duration // interval > MAX_SAMPLES:
        raise top.error(
            "interval",
            f"gives more than {MAX_SAMPLES} samples per flow over the duration",
            f"at least {units.format_duration(-(-duration // MAX_SAMPLES))}",
        )
    trials = top.take("trials", _int(1, 100_000), default=1, literal=1)
    engine = top.take("engine", _choice(ENGINES), default="sim", literal="sim")
    record_changes = top.take("record_changes", _bool, default=False, literal=False)
    capture = tuple(top.take("capture", _str_list, default=[], literal=[]))
    _sweep_and_report(top)
    run_options = _run_table(ctx, doc)

    if not top.has("path"):
        raise ctx.error("path", "missing (required)", allowed="a [path] table with at least rate")
    path, path_resolved = _validate_path(ctx, doc["path"])

    hosts_raw = doc.get("host", [])
    if not isinstance(hosts_raw, list):
        raise ctx.error("host", "must be an array of tables", hosts_raw, "[[host]] tables")
    hosts: list[Host] = []
    hosts_resolved: list[dict[str, Any]] = []
    for i, h in enumerate(hosts_raw):
        host, res = _validate_host(ctx, h, f"host.{i}", path, hosts)
        hosts.append(host)
        hosts_resolved.append(res)

    tcp_defaults: dict[str, Any] = {}
    tcp_raw = doc.get("tcp", {})
    if top.has("tcp"):
        tcp_defaults = _validate_knobs(ctx, tcp_raw, "tcp", catalog)
    stack = top.take("stack", _stack_name(catalog), default=DEFAULT_STACK, literal=DEFAULT_STACK)

    flows_raw = doc.get("flow", _MISSING)
    if flows_raw is _MISSING or flows_raw == []:
        raise ctx.error("flow", "missing (required)", allowed="at least one [[flow]] table")
    if not isinstance(flows_raw, list):
        raise ctx.error("flow", "must be an array of tables (write [[flow]], not [flow])")

    named = {h.name: h for h in hosts}
    flows: list[Flow] = []
    auto_hosts: list[Host] = []
    flows_resolved: list[dict[str, Any]] = []
    groups: set[str] = set()
    for i, f in enumerate(flows_raw):
        new_flows, new_hosts, res = _validate_flow(
            ctx, f, i, path, named, tcp_defaults, catalog, duration, groups, stack
        )
        flows.extend(new_flows)
        auto_hosts.extend(new_hosts)
        flows_resolved.append(res)

    all_hosts = hosts + auto_hosts
    nodes: list[dict[str, Any]] = [{"name": r, "kind": "router"} for r in ROUTERS]
    for h in all_hosts:
        nodes.append(
            {
                "name": h.name,
                "kind": "host",
                "nic_rate_bps": h.nic_rate_bps,
                "nic_ring_pkts": h.ring_pkts,
            }
        )
    links: list[dict[str, Any]] = [
        {
            "name": "bottleneck",
            "a": ROUTERS[0],
            "b": ROUTERS[1],
            "mtu": path.mtu,
            "monitor": True,
            "ab": _direction(path.rate_bps, path.delay_ns, path.queue_limit, path.loss),
            "ba": _direction(
                path.reverse_rate_bps, path.delay_ns, path.reverse_queue_limit, path.reverse_loss
            ),
        }
    ]
    for h in all_hosts:
        # Access link host ↔ router; both directions use host_queue and are lossless.
        leg = _direction(
            h.access_rate_bps, h.access_delay_ns, path.host_queue_limit, {"model": "none"}
        )
        links.append(
            {
                "name": f"{h.name}.access",
                "a": h.name,
                "b": h.router,
                "mtu": path.mtu,
                "monitor": False,
                "ab": leg,
                "ba": copy.deepcopy(leg),
            }
        )

    resolved = top.ordered_resolved()
    resolved["path"] = path_resolved
    if top.has("tcp"):
        resolved["tcp"] = copy.deepcopy(tcp_raw)
    if hosts_resolved:
        resolved["host"] = hosts_resolved
    resolved["flow"] = flows_resolved
    if run_options:
        resolved["run"] = dict(run_options)
    resolved = {k: resolved[k] for k in TOP_KEYS if k in resolved}

    return Scenario(
        file=ctx.file,
        name=name,
        description=description,
        seed=seed,
        duration_ns=duration,
        interval_ns=interval,
        trials=trials,
        engine=engine,
        record_changes=record_changes,
        capture=capture,
        run_options=run_options,
        path=path,
        hosts=all_hosts,
        flows=flows,
        nodes=nodes,
        links=links,
        resolved=resolved,
    )


def _run_table(ctx: _Ctx, doc: dict[str, Any]) -> dict[str, str]:
    """``[run]``: ``executor`` ("local" or "ray") and ``ray_address`` (tcplab.executors). Kept in
    the resolved scenario only when written: it says where trials run, not what they compute."""
    if "run" not in doc:
        return {}
    t = _Table(ctx, doc["run"], "run", RUN_KEYS, "the [run] table")
    out: dict[str, str] = {}
    ex = t.take("executor", _choice(("local", "ray")), default=None, literal=None)
    if ex is not None:
        out["executor"] = ex
    addr = t.take(
        "ray_address",
        _str("a Ray address such as 'auto' or '10.0.0.1:6379'"),
        default=None,
        literal=None,
    )
    if addr is not None:
        out["ray_address"] = addr
    return out


def _sweep_and_report(top: _Table) -> None:
    """``[sweep]`` and ``[report]`` (docs/scenario-format.md, "Sweeps"): a sweep is expanded into
    one scenario per point by :mod:`tcplab.sweep` before validation, so one arriving here was not;
    ``[report]`` says how ``tcplab reproduce`` tabulates the results and is kept as written."""
    if top.has("sweep"):
        raise top.ctx.error(
            "sweep",
            "this scenario declares a sweep (one scenario per point); expand it first",
            allowed="tcplab.sweep.load_points(file) or `tcplab run FILE`",
        )
    if top.has("report"):
        if not isinstance(top.raw("report"), dict):
            raise top.error("report", "must be a table", "a [report] table (see tcplab reproduce)")
        top.resolved["report"] = copy.deepcopy(top.raw("report"))
    if top.has("assume"):
        # Unpublished parameters and their plausible ranges (tcplab.reproduce.envelope); the
        # scenario itself uses each one's value, so they change nothing here but are checked.
        from .reproduce.envelope import parse_assumptions

        parse_assumptions({"assume": top.raw("assume")}, top.ctx.file)
        top.resolved["assume"] = copy.deepcopy(top.raw("assume"))


def _direction(
    rate: int, delay: int, limit: tuple[int | None, int | None], loss: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "rate_bps": rate,
        "delay_ns": delay,
        "queue": {"kind": "droptail", "limit_pkts": limit[0], "limit_bytes": limit[1]},
        "loss": dict(loss),
    }


def _validate_path(ctx: _Ctx, data: Any) -> tuple[PathModel, dict[str, Any]]:
    t = _Table(ctx, data, "path", PATH_KEYS, "[path]")
    rate = t.take("rate", _rate, required=True, allowed=units.RATE_EXAMPLE)
    mtu = t.take("mtu", _int(*MTU_RANGE, what="bytes"), default=DEFAULT_MTU, literal=DEFAULT_MTU)
    access_delay = t.take(
        "access_delay",
        _duration,
        default=units.parse_duration(DEFAULT_ACCESS_DELAY),
        literal=DEFAULT_ACCESS_DELAY,
    )
    if t.has("delay"):
        delay = t.take("delay", _duration)
        if t.has("rtt"):
            rtt = t.take("rtt", _pos_duration)
            if rtt < 2 * delay:
                raise t.error(
                    "rtt",
                    f"is less than twice the bottleneck delay path.delay = "
                    f"{units.format_duration(delay)}",
                    f"at least {units.format_duration(2 * delay)}",
                )
        else:
            rtt = 2 * (delay + 2 * access_delay)
    else:
        rtt = t.take(
            "rtt", _pos_duration, default=units.parse_duration(DEFAULT_RTT), literal=DEFAULT_RTT
        )
        delay = rtt // 2 - 2 * access_delay
        if delay < 0:
            raise t.error(
                "rtt",
                f"is too small for two access links of {units.format_duration(access_delay)} "
                "each way",
                f"at least {units.format_duration(4 * access_delay)}, or a smaller "
                "path.access_delay",
            )
    queue = t.take(
        "queue", units.parse_queue, default=units.parse_queue(DEFAULT_QUEUE), literal=DEFAULT_QUEUE
    )
    loss = {"model": "none"}
    if t.has("loss"):
        loss = _loss(ctx, "path.loss", t.raw("loss"))
        t.resolved["loss"] = t.raw("loss")
    else:
        t.resolved["loss"] = {"model": "none"}
    access_rate = t.take("access_rate", _rate, default=ACCESS_RATE_FACTOR * rate)
    host_queue = t.take(
        "host_queue",
        _fixed_queue,
        default=units.parse_queue(DEFAULT_HOST_QUEUE),
        literal=DEFAULT_HOST_QUEUE,
    )

    rev = _Table(ctx, data.get("reverse", {}), "path.reverse", REVERSE_KEYS, "[path.reverse]")
    rev_rate = rev.take("rate", _rate, default=rate)
    rev_queue = rev.take("queue", units.parse_queue, default=queue)
    rev_loss = {"model": "none"}
    if rev.has("loss"):
        rev_loss = _loss(ctx, "path.reverse.loss", rev.raw("loss"))
        rev.resolved["loss"] = rev.raw("loss")

    def limit(tab: _Table, q: QueueSize, link_rate: int) -> tuple[int | None, int | None]:
        try:
            return q.limit(link_rate, rtt, mtu)
        except UnitError as e:  # a BDP multiple too large for the engine
            raise (tab if tab.has("queue") else t).error("queue", e.problem, e.allowed) from None

    model = PathModel(
        rate_bps=rate,
        rtt_ns=rtt,
        delay_ns=delay,
        queue=queue,
        queue_limit=limit(t, queue, rate),
        mtu=mtu,
        loss=loss,
        access_rate_bps=access_rate,
        access_delay_ns=access_delay,
        host_queue_limit=host_queue.limit(access_rate, rtt, mtu),
        reverse_rate_bps=rev_rate,
        reverse_queue=rev_queue,
        reverse_queue_limit=limit(rev, rev_queue, rev_rate),
        reverse_loss=rev_loss,
    )
    resolved = t.ordered_resolved()
    if "reverse" in data:
        resolved["reverse"] = rev.ordered_resolved()
    return model, resolved


def _validate_host(
    ctx: _Ctx, data: Any, path: str, p: PathModel, earlier: list[Host]
) -> tuple[Host, dict[str, Any]]:
    t = _Table(ctx, data, path, HOST_KEYS, "a [[host]]")
    name = t.take("name", _name, required=True, allowed=_NAME_RULE)
    if name in ROUTERS:
        raise t.error("name", "is reserved for a router", "any other name")
    if any(h.name == name for h in earlier):
        raise t.error("name", "is used by another [[host]]", "a unique name")
    side = t.take("side", _choice(SIDES), required=True, allowed="'left' (r1) or 'right' (r2)")
    nic = t.take("nic_rate", _rate, default=None)
    ring = t.take("ring", _ring, default=None)
    access_rate = t.take("access_rate", _rate, default=p.access_rate_bps)
    access_delay = t.take("access_delay", _duration, default=p.access_delay_ns)
    host = Host(
        name=name,
        side=side,
        access_rate_bps=access_rate,
        access_delay_ns=access_delay,
        nic_rate_bps=nic,
        ring_pkts=ring,
    )
    return host, t.ordered_resolved()


def _validate_knobs(ctx: _Ctx, data: Any, path: str, catalog: Catalog) -> dict[str, Any]:
    names = list(catalog.knobs)
    t = _Table(ctx, data, path, names, "TCP knobs (see `tcplab list knobs`)")
    out: dict[str, Any] = {}
    for name in names:
        if name in t.data:
            knob = catalog.knobs[name]
            # "none" unsets an optional knob (TOML has no null), e.g. a stack's rx_capacity.
            out[name] = t.take(name, lambda v, k=knob: stacks_mod.convert_knob(k, v))
    return out


def _stack_name(catalog: Catalog) -> Callable[[Any], str]:
    """Converter of a stack name: unknown names get the nearest one; a personality file that does
    not validate against the engine's knobs is reported too."""

    def conv(v: Any) -> str:
        known = stacks_mod.names()
        if not isinstance(v, str) or v not in known:
            near = nearest(v, known) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise _Invalid(
                f"unknown stack{hint}",
                "one of " + ", ".join(repr(n) for n in known) + " (see `tcplab list stacks`)",
            )
        try:
            stacks_mod.get(v, catalog)
        except stacks_mod.StackError as e:
            raise _Invalid(f"the personality does not load: {e}", "a valid stack file") from None
        return v

    return conv


def _validate_cca(
    ctx: _Ctx, value: Any, path: str, catalog: Catalog, default: str = DEFAULT_CCA
) -> dict[str, Any]:
    cca_names = list(catalog.ccas)
    allowed = "one of " + ", ".join(repr(n) for n in cca_names)
    if isinstance(value, str):
        name, params_raw, name_path = value, {}, path
    elif isinstance(value, dict):
        name = value.get("name", default)
        params_raw = {k: v for k, v in value.items() if k != "name"}
        name_path = _join(path, "name")
    else:
        raise ctx.error(
            path,
            f"is a {_tname(value)}",
            value,
            "a CCA name or a table {name = ..., <param> = ...}",
        )
    if not isinstance(name, str) or name not in catalog.ccas:
        near = nearest(name, cca_names) if isinstance(name, str) else None
        hint = f" (did you mean '{near}'?)" if near else ""
        raise ctx.error(name_path, f"unknown congestion control{hint}", name, allowed)
    cca = catalog.ccas[name]
    pnames = list(cca.params)
    if not pnames and params_raw:
        key = next(iter(params_raw))
        raise ctx.error(
            _join(path, key),
            f"unknown parameter: {name} has no parameters",
            params_raw[key],
            f"cca = '{name}'",
        )
    t = _Table(ctx, params_raw, path, pnames, f"parameters of {name}")
    params: dict[str, Any] = {}
    for pname in pnames:
        if pname in t.data:
            params[pname] = t.take(pname, cca.params[pname].convert)
    return {"name": name, "params": params}


def _with_stack_params(
    ctx: _Ctx, cca: dict[str, Any], st: stacks_mod.Stack, fld: str, catalog: Catalog
) -> dict[str, Any]:
    """*cca* with the parameters stack *st* gives its implementation of that algorithm under the
    flow's own parameters (a CUBIC flow on linux-2.6.25 gets CUBIC v2.0)."""
    own = st.params_for(cca["name"])
    if not own:
        return cca
    algo = catalog.ccas[cca["name"]]
    params: dict[str, Any] = {}
    for pname, raw in own.items():
        if pname not in algo.params:
            raise ctx.error(
                fld,
                f"stack '{st.name}' sets parameter '{pname}' of {cca['name']}, which this "
                f"engine's {cca['name']} does not have",
                st.name,
                "parameters " + ", ".join(algo.params) if algo.params else "no parameters",
            )
        try:
            params[pname] = algo.params[pname].convert(raw)
        except (UnitError, ParamError) as e:
            raise ctx.error(
                fld,
                f"stack '{st.name}' sets {cca['name']}.{pname} = {raw!r}: {e.problem}",
                st.name,
                e.allowed,
            ) from None
    params.update(cca["params"])
    names = list(algo.params)
    return {"name": cca["name"], "params": {k: params[k] for k in names if k in params}}


def _validate_flow(
    ctx: _Ctx,
    data: Any,
    i: int,
    p: PathModel,
    named: Mapping[str, Host],
    tcp_defaults: Mapping[str, Any],
    catalog: Catalog,
    duration: int,
    groups: set[str],
    stack: str = DEFAULT_STACK,
) -> tuple[list[Flow], list[Host], dict[str, Any]]:
    path = f"flow.{i}"
    if not isinstance(data, dict):
        raise ctx.error(path, "must be a table", data, "a [[flow]] table")
    kind_raw = data.get("kind", "tcp")
    if kind_raw not in ("tcp", "udp"):
        near = nearest(kind_raw, ("tcp", "udp")) if isinstance(kind_raw, str) else None
        hint = f" (did you mean '{near}'?)" if near else ""
        raise ctx.error(_join(path, "kind"), f"unknown flow kind{hint}", kind_raw, "'tcp' or 'udp'")
    kind: str = kind_raw
    keys = FLOW_TCP_KEYS if kind == "tcp" else FLOW_UDP_KEYS
    other = FLOW_UDP_KEYS if kind == "tcp" else FLOW_TCP_KEYS
    other_only = {
        k: f"only for {'udp' if kind == 'tcp' else 'tcp'} flows" for k in other if k not in keys
    }
    t = _Table(ctx, data, path, keys, f"a {kind} [[flow]]", other_only)

    name = t.take("name", _name, default=f"flow{i}", literal=f"flow{i}")
    if name in groups:
        raise t.error("name", "is used by another [[flow]]", "a unique flow name")
    groups.add(name)
    t.take("kind", _choice(("tcp", "udp")), default="tcp", literal="tcp")

    def host_ref(v: Any) -> Host:
        if not isinstance(v, str) or v not in named:
            near = nearest(v, named) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            allowed = (
                "the name of a [[host]]: " + ", ".join(repr(n) for n in named)
                if named
                else "the name of a [[host]] (none are defined; omit src/dst to get "
                "automatic hosts)"
            )
            raise _Invalid(f"unknown host{hint}", allowed)
        return named[v]

    src = t.take("src", host_ref, default=None)
    dst = t.take("dst", host_ref, default=None)
    if t.has("direction"):
        direction = t.take("direction", _choice(DIRECTIONS))
    elif src is not None:
        direction = "forward" if src.side == "left" else "reverse"
    elif dst is not None:
        direction = "forward" if dst.side == "right" else "reverse"
    else:
        direction = "forward"
        t.resolved["direction"] = direction
    send_side = "left" if direction == "forward" else "right"
    recv_side = "right" if direction == "forward" else "left"
    if src is not None and src.side != send_side:
        raise t.error(
            "src",
            f"host '{src.name}' is on the {src.side} side, but a {direction} flow sends from "
            f"the {send_side}",
            f"a host on the {send_side} side, or direction = "
            f"'{'reverse' if direction == 'forward' else 'forward'}'",
        )
    if dst is not None and dst.side != recv_side:
        raise t.error(
            "dst",
            f"host '{dst.name}' is on the {dst.side} side, but a {direction} flow is received on "
            f"the {recv_side}",
            f"a host on the {recv_side} side",
        )

    start = t.take("start", _duration, default=0, literal="0s")
    if start >= duration:
        raise t.error(
            "start",
            "is not before the end of the run",
            f"less than duration = {units.format_duration(duration)}",
        )
    jitter = t.take("start_jitter", _duration, default=0)
    if start + jitter >= duration:
        raise t.error(
            "start_jitter",
            "can move the start past the end of the run",
            f"less than {units.format_duration(duration - start)} (duration − start)",
        )
    nbytes = None
    if kind == "tcp" and t.has("bytes"):
        if t.has("stop"):
            raise t.error(
                "bytes",
                "a flow is either sized (bytes) or timed (stop), not both",
                "remove stop (a sized transfer runs until done or until the end of the run)",
            )
        nbytes = t.take("bytes", _pos_bytes)
        stop = duration
    else:
        stop = t.take("stop", _duration, default=duration)
        if stop <= start + jitter:
            raise t.error(
                "stop",
                "is not after start" + (" + start_jitter" if jitter else ""),
                f"more than {units.format_duration(start + jitter)}",
            )
        if stop > duration:
            raise t.error(
                "stop",
                "is after the end of the run",
                f"at most duration = {units.format_duration(duration)}",
            )

    rtt_given = t.has("rtt")
    rtt = t.take("rtt", _pos_duration, default=p.rtt_ns)

    # Access delays: the flow's base RTT = 2 × (snd access + bottleneck + rcv access).
    budget_ns = rtt // 2 - p.delay_ns  # one-way access delay to share between the two hosts
    fixed = (src.access_delay_ns if src else 0) + (dst.access_delay_ns if dst else 0)
    if src is not None and dst is not None:
        actual = 2 * (src.access_delay_ns + p.delay_ns + dst.access_delay_ns)
        if rtt_given and actual != rtt:
            raise t.error(
                "rtt",
                f"cannot be met: hosts '{src.name}' and '{dst.name}' have fixed access delays, "
                f"giving a base RTT of {units.format_duration(actual)}",
                f"{units.format_duration(actual)} or omit rtt",
            )
        rtt = actual
    elif budget_ns < fixed:
        minimum = 2 * (p.delay_ns + fixed)
        why = f"the bottleneck's one-way delay is {units.format_duration(p.delay_ns)}"
        if fixed:
            who = src.name if src else dst.name  # type: ignore[union-attr]
            why += f" and host '{who}' adds {units.format_duration(fixed)}"
        note = "" if rtt_given else " (the default, path.rtt)"
        raise ctx.error(
            t.field("rtt"),
            f"base RTT {units.format_duration(rtt)}{note} is too small: {why}",
            t.raw("rtt") if rtt_given else _MISSING,
            f"at least {units.format_duration(minimum)}",
        )

    new_hosts: list[Host] = []
    if src is None or dst is None:
        free = budget_ns - fixed
        if src is None and dst is None:
            snd_delay, rcv_delay = free - free // 2, free // 2
        elif src is None:
            snd_delay, rcv_delay = free, 0
        else:
            snd_delay, rcv_delay = 0, free
        if src is None:
            src = Host(f"{name}.snd", send_side, p.access_rate_bps, snd_delay, auto=True)
            new_hosts.append(src)
        if dst is None:
            dst = Host(f"{name}.rcv", recv_side, p.access_rate_bps, rcv_delay, auto=True)
            new_hosts.append(dst)

    flows: list[Flow] = []
    if kind == "tcp":
        streams = t.take("streams", _int(1, 10_000), default=1, literal=1)
        # Each end host runs its stack's personality (python/tcplab/stacks/<name>.toml).
        sender_stack = t.take("sender_stack", _stack_name(catalog), default=stack)
        receiver_stack = t.take("receiver_stack", _stack_name(catalog), default=stack)
        sender = stacks_mod.get(sender_stack, catalog)
        receiver = stacks_mod.get(receiver_stack, catalog)
        sender_field = t.field("sender_stack") if t.has("sender_stack") else "stack"
        # The scenario's knobs for this flow — [tcp], then window, then [flow.tcp] — apply to
        # both end hosts, over each host's personality (docs/scenario-format.md, "Stacks").
        common = dict(tcp_defaults)
        flow_tcp: dict[str, Any] = {}
        if t.has("tcp"):
            flow_tcp = _validate_knobs(ctx, t.raw("tcp"), t.field("tcp"), catalog)
            t.resolved["tcp"] = copy.deepcopy(t.raw("tcp"))
        window_set = t.has("window")
        if window_set:
            window = t.take("window", _pos_bytes)
            for knob in ("sndbuf", "rcvbuf"):
                if knob not in catalog.knobs:
                    raise t.error("window", f"the engine has no '{knob}' knob to set")
                if knob in flow_tcp:
                    raise ctx.error(
                        _join(t.field("tcp"), knob),
                        "conflicts with window (window sets both sndbuf and rcvbuf)",
                        t.raw("tcp")[knob],
                        "either window or tcp.sndbuf/tcp.rcvbuf",
                    )
                common[knob] = window
        common.update(flow_tcp)
        order = {n: j for j, n in enumerate(catalog.knobs)}

        def ordered(d: dict[str, Any]) -> dict[str, Any]:
            return {k: d[k] for k in sorted(d, key=lambda k: order.get(k, len(order)))}

        def host_knobs(st: stacks_mod.Stack) -> dict[str, Any]:
            own = st.knob_values()
            if window_set and own.get("rcvbuf_autotune_max") is not None:
                # window = iperf -w = SO_RCVBUF, which fixes the buffer: receive autotuning is
                # off for such a socket (Linux SOCK_RCVBUF_LOCK; assumed alike on Windows/macOS).
                own["rcvbuf_autotune_max"] = None
            return ordered({**own, **common})

        knobs = host_knobs(sender)
        receiver_knobs = host_knobs(receiver)
        if t.has("receiver_tcp"):
            # The receiving host only: over its personality and the flow's knobs.
            overrides = _validate_knobs(
                ctx, t.raw("receiver_tcp"), t.field("receiver_tcp"), catalog
            )
            t.resolved["receiver_tcp"] = copy.deepcopy(t.raw("receiver_tcp"))
            receiver_knobs = ordered({**receiver_knobs, **overrides})
        if t.has("cca"):
            # A table without a name means the sender stack's default algorithm.
            cca = _validate_cca(ctx, t.raw("cca"), t.field("cca"), catalog, default=sender.cca)
            t.resolved["cca"] = copy.deepcopy(t.raw("cca"))
        else:
            if sender.cca not in catalog.ccas:
                raise ctx.error(
                    sender_field,
                    f"stack '{sender.name}' defaults to congestion control '{sender.cca}', "
                    "which this engine does not provide",
                    sender.name,
                    "set cca for the flow (see `tcplab list ccas`)",
                )
            cca = _validate_cca(ctx, sender.cca, t.field("cca"), catalog)
        cca = _with_stack_params(ctx, cca, sender, sender_field, catalog)
        for k in range(streams):
            flows.append(
                Flow(
                    name=f"{name}.{k}" if streams > 1 else name,
                    group=name,
                    kind="tcp",
                    direction=direction,
                    src=src.name,
                    dst=dst.name,
                    start_ns=start,
                    start_jitter_ns=jitter,
                    stop_ns=stop,
                    rtt_ns=rtt,
                    bytes=nbytes,
                    cca=copy.deepcopy(cca),
                    tcp=dict(knobs),
                    receiver_tcp=dict(receiver_knobs),
                    sender_stack=sender_stack,
                    receiver_stack=receiver_stack,
                )
            )
    else:
        rate = t.take("rate", _rate, required=True, allowed=units.RATE_EXAMPLE)
        payload = t.take(
            "payload",
            _pos_bytes,
            default=units.parse_bytes(DEFAULT_PAYLOAD),
            literal=DEFAULT_PAYLOAD,
        )
        if payload + UDP_IP_HEADERS > p.mtu:
            raise t.error(
                "payload",
                f"does not fit the MTU of {p.mtu} B with {UDP_IP_HEADERS} B of IP/UDP headers",
                f"at most {p.mtu - UDP_IP_HEADERS}B",
            )
        flows.append(
            Flow(
                name=name,
                group=name,
                kind="udp",
                direction=direction,
                src=src.name,
                dst=dst.name,
                start_ns=start,
                start_jitter_ns=jitter,
                stop_ns=stop,
                rtt_ns=rtt,
                rate_bps=rate,
                payload_bytes=payload,
            )
        )
    return flows, new_hosts, t.ordered_resolved()
