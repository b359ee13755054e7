"""Reading a TOML table field by field: every error names the file, the field's dotted path, the
bad value and what is allowed (and where an override set it).

:class:`Table` is one table being validated (unknown keys are errors, every value read is
recorded for the resolved scenario); the ``as_*`` functions are the converters its
:meth:`Table.take` applies, raising :class:`Invalid` with the problem and what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import units
from ..catalog import ParamError
from ..errors import ScenarioError, nearest
from ..units import QueueSize, UnitError
from .defaults import DEFAULT_PAYLOAD, NAME_RE, NAME_RULE, UDP_IP_HEADERS

#: Marks "no value given" (TOML has no null, but None is a valid default).
MISSING: Any = object()


class Ctx:
    def __init__(self, file: str, origins: Mapping[str, str]) -> None:
        self.file = file
        self.origins = dict(origins)

    def origin(self, fld: str) -> str | None:
        for p, o in self.origins.items():
            if fld == p or fld.startswith(p + ".") or p.startswith(fld + "."):
                return o
        return None

    def error(
        self, fld: str, problem: str, value: Any = MISSING, allowed: str | None = None
    ) -> ScenarioError:
        return ScenarioError(
            self.file,
            fld,
            problem,
            value=None if value is MISSING else value,
            has_value=value is not MISSING,
            allowed=allowed,
            origin=self.origin(fld),
        )


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Table:
    """A TOML table being validated: unknown keys are errors; every read is recorded."""

    def __init__(
        self,
        ctx: Ctx,
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
                    join(path, k),
                    f"not allowed here ({other_keys[k]})",
                    data[k],
                    allowed="keys " + ", ".join(keys),
                )
            near = nearest(k, keys)
            hint = f" (did you mean '{near}'?)" if near else ""
            raise ctx.error(
                join(path, k), f"unknown key{hint}", allowed=f"keys of {what}: " + ", ".join(keys)
            )

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        return self.data.get(key, MISSING)

    def field(self, key: str) -> str:
        return join(self.path, key)

    def error(self, key: str, problem: str, allowed: str | None = None) -> ScenarioError:
        return self.ctx.error(self.field(key), problem, self.data.get(key, MISSING), allowed)

    def take(
        self,
        key: str,
        conv: Callable[[Any], Any],
        *,
        default: Any = MISSING,
        literal: Any = MISSING,
        required: bool = False,
        allowed: str | None = None,
        record: bool = True,
    ) -> Any:
        """Read and convert *key*; *default* is returned (and *literal* recorded) when absent."""
        if key not in self.data:
            if required:
                raise self.ctx.error(self.field(key), "missing (required)", allowed=allowed)
            if literal is not MISSING and record:
                self.resolved[key] = literal
            return default
        raw = self.data[key]
        try:
            value = conv(raw)
        except (UnitError, ParamError, Invalid) as e:
            raise self.ctx.error(self.field(key), e.problem, raw, e.allowed) from None
        if record:
            self.resolved[key] = raw
        return value

    def ordered_resolved(self) -> dict[str, Any]:
        return {k: self.resolved[k] for k in self.keys if k in self.resolved}


class Invalid(Exception):
    def __init__(self, problem: str, allowed: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.allowed = allowed


def as_text(allowed: str = "a string") -> Callable[[Any], str]:
    def conv(v: Any) -> str:
        if not isinstance(v, str):
            raise Invalid(f"is a {tname(v)}, not a string", allowed)
        return v

    return conv


def tname(v: Any) -> str:
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


def as_str_list(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise Invalid(
            f"is a {tname(v)}, not a list of strings",
            'link or host names, e.g. ["bottleneck", "host:cubic.snd"]',
        )
    return list(v)


def as_bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise Invalid(f"is a {tname(v)}, not a boolean", "true or false")
    return v


def as_int(lo: int, hi: int | None = None, what: str = "") -> Callable[[Any], int]:
    allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer ≥ {lo}"
    if what:
        allowed += f" ({what})"

    def conv(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise Invalid(f"is a {tname(v)}, not an integer", allowed)
        if v < lo or (hi is not None and v > hi):
            raise Invalid("is out of range", allowed)
        return v

    return conv


def as_choice(options: Sequence[str]) -> Callable[[Any], str]:
    allowed = "one of " + ", ".join(repr(o) for o in options)

    def conv(v: Any) -> str:
        if not isinstance(v, str) or v not in options:
            near = nearest(v, options) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise Invalid(f"is not a valid choice{hint}", allowed)
        return v

    return conv


def as_name(v: Any) -> str:
    if not isinstance(v, str) or not NAME_RE.match(v):
        raise Invalid("is not a valid name", NAME_RULE)
    return v


def as_positive(parse: Callable[[Any], int], allowed: str) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        n = parse(v)
        if n <= 0:
            raise Invalid("must be more than zero", allowed)
        return n

    return conv


as_rate = as_positive(units.parse_rate, units.RATE_EXAMPLE)
as_duration = units.parse_duration
as_pos_duration = as_positive(units.parse_duration, units.DURATION_EXAMPLE)
as_pos_bytes = as_positive(units.parse_bytes, units.BYTES_EXAMPLE)


def duration_at_most(limit_ns: int, limit: str, example: str) -> Callable[[Any], int]:
    """A duration parser that rejects values above *limit_ns* (*limit* as said in the error)."""

    def parse(v: Any) -> int:
        n = units.parse_duration(v)
        if n > limit_ns:
            raise Invalid(f"is more than {limit}", example)
        return n

    return parse


#: Largest jitter and tick both engines accept (crates/tcplab-sim/src/config.rs MAX_JITTER_NS,
#: MAX_TICK_NS).
MAX_JITTER_NS = 10_000_000_000
MAX_TICK_NS = 1_000_000_000
as_jitter = duration_at_most(
    MAX_JITTER_NS, "10 s", "a host or emulator timing noise like '50us' or '1ms'"
)
as_tick = duration_at_most(
    MAX_TICK_NS, "1 s", "a router's clock tick like '10ms' (HZ=100) or '1ms'"
)


def as_ring(v: Any) -> int:
    n = units.parse_packets(v)
    if n < 1:
        raise Invalid("must be at least 1 packet", units.PACKETS_EXAMPLE)
    return n


def as_fixed_queue(v: Any) -> QueueSize:
    q = units.parse_queue(v)
    if q.kind == "bdp":
        raise Invalid(
            "a BDP multiple is not allowed here",
            "a packet count like '1000pkt' or a size like '4MB'",
        )
    return q


def take_udp_payload(t: Table, mtu: int) -> int:
    """A UDP source's ``payload`` (default iperf's 1470 B): it and the IP/UDP headers must fit
    the MTU. Shared by UDP flows and on-off background sources."""
    payload = t.take(
        "payload",
        as_pos_bytes,
        default=units.parse_bytes(DEFAULT_PAYLOAD),
        literal=DEFAULT_PAYLOAD,
    )
    if payload + UDP_IP_HEADERS > mtu:
        raise t.error(
            "payload",
            f"does not fit the MTU of {mtu} B with {UDP_IP_HEADERS} B of IP/UDP headers",
            f"at most {mtu - UDP_IP_HEADERS}B",
        )
    return payload


def kinded_table(
    ctx: Ctx,
    data: Any,
    path: str,
    section: str,
    members: str,
    tcp_keys: Sequence[str],
    udp_keys: Sequence[str],
    allowed_kinds: str,
) -> tuple[Table, str]:
    """The table at *path* of a ``[[section]]`` with a ``kind`` of "tcp" (default) or "udp",
    validated with the keys of its kind (a key only the other kind takes is named as such: "only
    for udp *members*"), and the kind. Shared by ``[[flow]]`` and ``[[background]]``."""
    if not isinstance(data, dict):
        raise ctx.error(path, "must be a table", data, f"a [[{section}]] table")
    kind = data.get("kind", "tcp")
    if kind not in ("tcp", "udp"):
        near = nearest(kind, ("tcp", "udp")) if isinstance(kind, str) else None
        hint = f" (did you mean '{near}'?)" if near else ""
        raise ctx.error(join(path, "kind"), f"unknown {section} kind{hint}", kind, allowed_kinds)
    keys, other = (tcp_keys, udp_keys) if kind == "tcp" else (udp_keys, tcp_keys)
    where = f"only for {'udp' if kind == 'tcp' else 'tcp'} {members}"
    other_only = {k: where for k in other if k not in keys}
    return Table(ctx, data, path, keys, f"a {kind} [[{section}]]", other_only), kind
