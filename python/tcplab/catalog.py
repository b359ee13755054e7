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
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import units
from .errors import EngineUnavailable, UserError, nearest

__all__ = ["Catalog", "Cca", "Core", "Param", "ParamError", "default_catalog", "load_core"]

KINDS = ("duration", "bytes", "rate", "bool", "int", "float", "choice", "iw")
IW_NAMES = ("rfc3390", "rfc6928")


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

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Param:
        choices = list(d.get("choices") or ())  # type: ignore[call-overload]
        kind = str(d.get("kind", "")).strip()
        return cls(
            name=str(d["name"]),
            kind=kind.lower(),
            default=d.get("default"),
            doc=str(d.get("doc") or "").strip(),
            choices=tuple(str(c) for c in choices),
        )

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
            return "an integer"
        if k == "float":
            return "a number"
        if k == "choice":
            extra = " (or true/false)" if "off" in self.choices else ""
            return "one of " + ", ".join(repr(c) for c in self.choices) + extra
        if k == "iw":
            names = self.choices or IW_NAMES
            return "a number of segments (integer ≥ 1) or one of " + ", ".join(
                repr(c) for c in names
            )
        return "a value"

    def convert(self, value: object) -> object:
        """The normalized (base-unit) form of a scenario value; raises UnitError/ParamError."""
        k = self.kind
        if k == "duration":
            return units.parse_duration(value)
        if k == "bytes":
            return units.parse_bytes(value)
        if k == "rate":
            return units.parse_rate(value)
        if k == "bool":
            if not isinstance(value, bool):
                raise ParamError("is not a boolean", self.allowed())
            return value
        if k == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError("is not an integer", self.allowed())
            return value
        if k == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParamError("is not a number", self.allowed())
            return float(value)
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
