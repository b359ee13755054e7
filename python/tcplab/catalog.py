"""What the engine can be told: TCP knobs and congestion-control algorithms.

Validation is data-driven: the list of knobs (``tcplab._core.tcp_knobs()``) and of algorithms
with their parameters (``tcplab._core.list_ccas()``) comes from the Rust core, so a knob added
there is accepted by scenario files at once. A knob or CCA parameter has a *kind* that says how
a scenario value is written and converted to the base unit of the normalized config:

========= ========================================== =================================
kind      written as                                 normalized (docs/design.md §3)
========= ========================================== =================================
duration  ``"200ms"`` (see :mod:`tcplab.units`)       int ns
bytes     ``"64KB"``, ``"16MiB"``, bare int           int bytes
rate      ``"100Mbit"``, bare number                  int bit/s
bool      ``true`` / ``false``                        bool
int       TOML integer                                int
float     TOML number                                 float
choice    one of the knob's ``choices``               str
iw        segments (int ≥ 1) or ``"rfc3390"`` /       int or str
          ``"rfc6928"``
========= ========================================== =================================

A value must also fit the engine's field: the core gives each integer knob and parameter its
range (``min``/``max``: a ``u32`` knob such as ``mss`` or ``dupthresh`` holds 0 to 2^32 − 1, a
CCA's integer parameter is an ``i64``); durations, sizes and rates are at most 2^64 − 1 base
units and floats finite 64-bit numbers. A value outside is a :class:`ParamError` or
:class:`~tcplab.units.UnitError` that says the range, never a type error from the engine.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import units
from .errors import EngineUnavailable, UserError, nearest

__all__ = ["Catalog", "Cca", "Core", "Param", "ParamError", "default_catalog", "load_core"]

KINDS = ("duration", "bytes", "rate", "bool", "int", "float", "choice", "iw")
IW_NAMES = ("rfc3390", "rfc6928")
#: The range of an integer when the core does not give one: the JSON integers the engine reads.
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


class ParamError(UserError, ValueError):
    """A knob or CCA parameter value does not fit its kind."""

    def __init__(self, problem: str, allowed: str) -> None:
        self.problem = problem
        self.allowed = allowed
        super().__init__(f"{problem}; expected {allowed}")


@dataclass(frozen=True)
class Param:
    """One TCP knob or one parameter of a congestion-control algorithm."""

    name: str
    kind: str
    default: object = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    #: The range of the engine's integer field (None: not an integer, or not given).
    min: int | None = None
    max: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Param:
        choices = list(d.get("choices") or ())  # type: ignore[call-overload]
        kind = str(d.get("kind", "")).strip()
        lo, hi = d.get("min"), d.get("max")
        return cls(
            name=str(d["name"]),
            kind=kind.lower(),
            default=d.get("default"),
            doc=str(d.get("doc") or "").strip(),
            choices=tuple(str(c) for c in choices),
            min=lo if isinstance(lo, int) and not isinstance(lo, bool) else None,
            max=hi if isinstance(hi, int) and not isinstance(hi, bool) else None,
        )

    def _limit(self) -> int:
        """The largest value of a duration/bytes/rate/iw field."""
        return units.U64_MAX if self.max is None else self.max

    def _int_range(self) -> tuple[int, int]:
        lo = I64_MIN if self.min is None else self.min
        hi = I64_MAX if self.max is None else self.max
        return lo, hi

    def allowed(self) -> str:
        """What may be written, for error messages."""
        k = self.kind
        if k == "duration":
            return units.DURATION_EXAMPLE
        if k == "bytes":
            return units.BYTES_EXAMPLE
        if k == "rate":
            return units.RATE_EXAMPLE
        if k == "bool":
            return "true or false"
        if k == "int":
            lo, hi = self._int_range()
            return f"an integer from {lo} to {units.at_most(hi)}"
        if k == "float":
            return "a finite number (a 64-bit float: magnitude at most 1.8e308)"
        if k == "choice":
            extra = " (or true/false)" if "off" in self.choices else ""
            return "one of " + ", ".join(repr(c) for c in self.choices) + extra
        if k == "iw":
            names = self.choices or IW_NAMES
            most = units.at_most(self._limit())
            return f"a number of segments (integer from 1 to {most}) or one of " + ", ".join(
                repr(c) for c in names
            )
        return "a value"

    def convert(self, value: object) -> object:
        """The normalized (base-unit) form of a scenario value; raises UnitError/ParamError."""
        k = self.kind
        if k == "duration":
            return units.parse_duration(value, self._limit())
        if k == "bytes":
            return units.parse_bytes(value, self._limit())
        if k == "rate":
            return units.parse_rate(value, self._limit())
        if k == "bool":
            if not isinstance(value, bool):
                raise ParamError("is not a boolean", self.allowed())
            return value
        if k == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError("is not an integer", self.allowed())
            lo, hi = self._int_range()
            if not lo <= value <= hi:
                raise ParamError("is out of the range the engine can represent", self.allowed())
            return value
        if k == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParamError("is not a number", self.allowed())
            try:
                x = float(value)
            except OverflowError:
                raise ParamError(
                    "is too large for the engine's 64-bit floating point", self.allowed()
                ) from None
            if not math.isfinite(x):
                raise ParamError("is not a finite number", self.allowed())
            return x
        if k == "choice":
            if isinstance(value, bool) and "off" in self.choices:
                # A choice listing "off" also takes false (= "off") and true (= on, the default
                # mode); the engine resolves true.
                return "off" if not value else True
            if not isinstance(value, str) or value not in self.choices:
                near = nearest(str(value), self.choices) if isinstance(value, str) else None
                hint = f" (did you mean '{near}'?)" if near else ""
                raise ParamError(f"is not a valid choice{hint}", self.allowed())
            return value
        if k == "iw":
            names = self.choices or IW_NAMES
            if isinstance(value, bool):
                raise ParamError("is a boolean", self.allowed())
            if isinstance(value, int):
                if value < 1:
                    raise ParamError("must be at least 1 segment", self.allowed())
                if value > self._limit():
                    raise ParamError("is more than the engine can represent", self.allowed())
                return value
            if isinstance(value, str) and value in names:
                return value
            near = nearest(value, names) if isinstance(value, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise ParamError(f"is not a valid initial window{hint}", self.allowed())
        # A kind this version does not know: pass the TOML value through; the engine checks it.
        return value

    def show_default(self) -> str:
        """The default in scenario notation (``200ms``, ``64KB``, ``true``)."""
        d = self.default
        if d is None:
            return "-"
        if isinstance(d, bool):
            return "true" if d else "false"
        if isinstance(d, int):
            if self.kind == "duration":
                return units.format_duration(d)
            if self.kind == "bytes":
                return units.format_bytes(d)
            if self.kind == "rate":
                return units.format_rate(d)
        return str(d)


@dataclass(frozen=True)
class Cca:
    """A congestion-control algorithm the engine provides."""

    name: str
    summary: str = ""
    source: str = ""
    params: dict[str, Param] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Cca:
        params = [Param.from_dict(p) for p in d.get("params") or ()]  # type: ignore[union-attr]
        return cls(
            name=str(d["name"]),
            summary=str(d.get("summary") or ""),
            source=str(d.get("source") or ""),
            params={p.name: p for p in params},
        )


@dataclass(frozen=True)
class Catalog:
    """The TCP knobs and CCAs an engine accepts."""

    knobs: dict[str, Param]
    ccas: dict[str, Cca]

    @classmethod
    def from_lists(
        cls, knobs: Iterable[Mapping[str, object]], ccas: Iterable[Mapping[str, object]]
    ) -> Catalog:
        ks = [Param.from_dict(k) for k in knobs]
        cs = [Cca.from_dict(c) for c in ccas]
        return cls(knobs={k.name: k for k in ks}, ccas={c.name: c for c in cs})

    @classmethod
    def from_core(cls) -> Catalog:
        core = load_core()
        return cls.from_lists(core.tcp_knobs(), core.list_ccas())


class Core:
    """The functions of ``tcplab._core`` as the Python side uses them (docs/design.md §1):
    ``run(config_json) -> dict``, ``tcp_knobs() -> list``, ``list_ccas() -> list``."""

    def __init__(self, module: Any) -> None:
        self.module = module

    def run(self, config_json: str) -> dict[str, Any]:
        return self.module.run(config_json)

    def tcp_knobs(self) -> list[dict[str, Any]]:
        return self.module.tcp_knobs()

    def list_ccas(self) -> list[dict[str, Any]]:
        return self.module.list_ccas()


_lock = threading.Lock()
_cached: Catalog | None = None


def load_core() -> Core:
    """Import ``tcplab._core``, or raise EngineUnavailable saying how to build it."""
    try:
        from . import _core  # type: ignore[attr-defined]
    except ImportError as exc:
        raise EngineUnavailable(
            "the simulator extension tcplab._core is not built "
            f"({exc}); build it with `maturin develop --release` or `pip install .` "
            "in the tcplab source tree"
        ) from exc
    return Core(_core)


def default_catalog() -> Catalog:
    """The catalog of the built ``tcplab._core`` (loaded once per process)."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = Catalog.from_core()
        return _cached
