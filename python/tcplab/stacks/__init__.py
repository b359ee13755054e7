"""OS stack personalities: plain data files, one per stack (``<name>.toml`` in this package).

A *personality* is what one operating system's TCP does differently from the engine's defaults
(the "generic" stack: the knob defaults of ``tcplab._core.tcp_knobs()``, i.e. RFC behaviour). A
scenario names the stack of the sending and of the receiving host of every TCP flow
(docs/scenario-format.md, "Stacks"); :mod:`tcplab.scenario` resolves the knobs from them, with
the personality rules of :mod:`tcplab.stacks.rules` (e.g. a set window turns autotuning off).

Every value carries its source, so a reader can trace each number to an RFC, a paper, an OS
document, a kernel source or a row of the facts table (``stacks-and-ccas.md``, the project's
shared reference of facts with sources). Values the reference marks UNVERIFIED, or that come from
our own inference, have ``verified = false``: they are documented assumptions. ``approximate =
true`` marks values where the engine's model is simpler than the OS mechanism (a fixed timer for an
adaptive one, say); ``note`` says how. ``fitted = "..."`` marks a value chosen by looking at a
published result (what it was fitted to): a study scenario whose results depend on it declares it
in ``[[report.fitted]]``, and what it was fitted to is never counted as agreement.

File format::

    name = "linux-2.6.10"               # must equal the file name without .toml
    description = "one line for `tcplab list stacks`"
    os = "Linux"
    version = "2.6.10"

    [cca]                                # the stack's default congestion control
    name = "bic"
    source = "stacks-and-ccas.md B.1 ..."
    verified = true

    [cca_params.bic.variant]             # this kernel's implementation of an algorithm: applied
    value = "2.6.10"                     # whenever a flow on this stack uses it (default or not)
    source = "..."
    verified = true

    [knobs.initial_window]               # one table per knob that this stack sets
    value = "rfc3390"                    # scenario notation ("200ms", "64KB", true, 2, ...)
    source = "..."
    verified = true
    approximate = false                  # optional (default false)
    note = "..."                         # optional
    fitted = "Iwanaga I1's ≈ 200 Mbit/s"  # optional: chosen to match this published result

Knob values are checked against the engine's knob list (name, kind); an optional knob can be set
to ``"none"`` (null). CCA parameters are checked when a flow uses the algorithm, against the
engine's list of algorithms (so a stack whose default algorithm this build lacks can still be
listed and shown).
"""

from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..catalog import Catalog, Param, ParamError, default_catalog
from ..errors import UserError, nearest
from ..units import UnitError

__all__ = [
    "GENERIC",
    "Setting",
    "Stack",
    "StackError",
    "convert_knob",
    "get",
    "load_all",
    "names",
]

#: The stack of the knob defaults (RFC behaviour); the default of a scenario's ``stack``.
GENERIC = "generic"

_NAME_RE = re.compile(r"^[a-z][a-z0-9.-]*$")
_TOP_KEYS = ("name", "description", "os", "version", "notes", "cca", "cca_params", "knobs")
_CCA_KEYS = ("name", "source", "verified", "approximate", "note", "fitted")
_SETTING_KEYS = ("value", "source", "verified", "approximate", "note", "fitted")
#: Written for an optional knob (or CCA parameter) to mean null: TOML has no null.
NONE_WORD = "none"


class StackError(UserError, ValueError):
    """A stack name is unknown or a personality file is invalid."""


@dataclass(frozen=True)
class Setting:
    """One traceable value: as written (``raw``), normalized (``value``), and where it is from."""

    raw: Any
    value: Any
    source: str
    verified: bool
    approximate: bool = False
    note: str = ""
    fitted: str = ""  #: the published result this value was chosen to match ('' if none)


@dataclass(frozen=True)
class Stack:
    """A validated personality."""

    name: str
    description: str
    os: str
    version: str
    file: str
    cca: str
    cca_setting: Setting
    #: Per algorithm: parameter name → setting (raw TOML values, checked when used).
    cca_params: dict[str, dict[str, Setting]] = field(default_factory=dict)
    #: Knob name → setting; ``value`` is normalized (base units, docs/design.md §3).
    knobs: dict[str, Setting] = field(default_factory=dict)
    notes: str = ""

    def knob_values(self) -> dict[str, Any]:
        """The knobs this stack sets, normalized (what goes into a flow's ``tcp`` object)."""
        return {k: s.value for k, s in self.knobs.items()}

    def params_for(self, cca: str) -> dict[str, Any]:
        """This stack's parameters (raw values) for algorithm *cca*; empty if it has none."""
        return {p: s.raw for p, s in self.cca_params.get(cca, {}).items()}

    def default_cca_text(self) -> str:
        """``bic {variant = "2.6.10"}``: the default algorithm with this stack's parameters."""
        params = self.params_for(self.cca)
        if not params:
            return self.cca
        inner = ", ".join(f"{k} = {_toml_value(v)}" for k, v in params.items())
        return f"{self.cca} {{{inner}}}"

    def settings(self) -> list[tuple[str, Setting]]:
        """Every traceable value: ``cca``, ``cca_params.<cca>.<param>`` and ``knobs.<knob>``."""
        out: list[tuple[str, Setting]] = [("cca", self.cca_setting)]
        for cca, params in self.cca_params.items():
            out.extend((f"cca_params.{cca}.{p}", s) for p, s in params.items())
        out.extend((f"knobs.{k}", s) for k, s in self.knobs.items())
        return out


def _toml_value(v: Any) -> str:
    """*v* as TOML, as a scenario would write it (tcplab.scenario.overrides.toml_literal)."""
    from ..scenario.overrides import toml_literal  # not at import: tcplab.scenario imports us

    return toml_literal(v)


def convert_knob(param: Param, raw: Any) -> Any:
    """The normalized value of knob *param* written as *raw*; ``"none"`` is null for a knob whose
    default is null (an optional knob). Raises UnitError/ParamError."""
    if raw == NONE_WORD and param.default is None:
        return None
    return param.convert(raw)


# ---------------------------------------------------------------------------------------------
# Reading


def _files() -> dict[str, Any]:
    pkg = resources.files(__name__)
    return {
        p.name[: -len(".toml")]: p
        for p in pkg.iterdir()
        if p.name.endswith(".toml") and p.is_file()
    }


def names() -> list[str]:
    """Names of the shipped personalities: ``generic`` first, then alphabetical."""
    found = sorted(_files())
    if GENERIC in found:
        found.remove(GENERIC)
        found.insert(0, GENERIC)
    return found


def _fail(file: str, where: str, problem: str) -> StackError:
    return StackError(f"stack file {file}: {where}: {problem}" if where else f"{file}: {problem}")


def _str_field(file: str, data: Mapping[str, Any], key: str, where: str, required: bool) -> str:
    v = data.get(key, None)
    if v is None:
        if required:
            raise _fail(file, f"{where}{key}", "missing (required)")
        return ""
    if not isinstance(v, str) or (required and not v.strip()):
        raise _fail(file, f"{where}{key}", "must be a non-empty string")
    return v.strip()


def _check_keys(file: str, data: Any, keys: tuple[str, ...], where: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise _fail(file, where, "must be a table")
    for k in data:
        if k not in keys:
            near = nearest(k, keys)
            hint = f" (did you mean '{near}'?)" if near else ""
            raise _fail(file, f"{where}.{k}" if where else k, f"unknown key{hint}")
    return data


def _setting(
    file: str, data: Any, where: str, convert: Any | None, *, need_value: bool = True
) -> Setting:
    t = _check_keys(file, data, _SETTING_KEYS if need_value else _CCA_KEYS, where)
    if need_value and "value" not in t:
        raise _fail(file, f"{where}.value", "missing (required)")
    source = _str_field(file, t, "source", f"{where}.", required=True)
    verified = t.get("verified", None)
    if not isinstance(verified, bool):
        raise _fail(
            file,
            f"{where}.verified",
            "missing or not a boolean (true: confirmed in the cited source; false: a documented "
            "assumption)",
        )
    approximate = t.get("approximate", False)
    if not isinstance(approximate, bool):
        raise _fail(file, f"{where}.approximate", "must be a boolean")
    note = _str_field(file, t, "note", f"{where}.", required=False)
    fitted = _str_field(file, t, "fitted", f"{where}.", required=False)
    if not verified and not note and "UNVERIFIED" not in source:
        raise _fail(
            file,
            where,
            "verified = false needs a note (or 'UNVERIFIED' in the source) saying what is assumed",
        )
    raw = t.get("value")
    value = raw
    if need_value and convert is not None:
        try:
            value = convert(raw)
        except (UnitError, ParamError) as e:
            raise _fail(
                file, f"{where}.value", f"{raw!r}: {e.problem}; expected {e.allowed}"
            ) from None
    return Setting(raw, value, source, verified, approximate, note, fitted)


def parse(text: str, file: str, catalog: Catalog) -> Stack:
    """Validate the personality *text* (read from *file*) against the engine's knobs."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _fail(file, "", f"not valid TOML: {e}") from None
    _check_keys(file, doc, _TOP_KEYS, "")
    name = _str_field(file, doc, "name", "", required=True)
    if not _NAME_RE.match(name):
        raise _fail(file, "name", f"{name!r} is not a valid stack name (a-z, 0-9, '.', '-')")
    description = _str_field(file, doc, "description", "", required=True)
    os_name = _str_field(file, doc, "os", "", required=True)
    version = _str_field(file, doc, "version", "", required=False)
    notes = _str_field(file, doc, "notes", "", required=False)

    if "cca" not in doc:
        raise _fail(file, "cca", "missing (required): the stack's default congestion control")
    cca_t = _check_keys(file, doc["cca"], _CCA_KEYS, "cca")
    cca = _str_field(file, cca_t, "name", "cca.", required=True)
    meta = _setting(file, cca_t, "cca", None, need_value=False)
    cca_setting = Setting(cca, cca, meta.source, meta.verified, meta.approximate, meta.note)

    cca_params: dict[str, dict[str, Setting]] = {}
    raw_params = doc.get("cca_params", {})
    if not isinstance(raw_params, dict):
        raise _fail(file, "cca_params", "must be a table of tables")
    for algo, params in raw_params.items():
        if not isinstance(params, dict):
            raise _fail(file, f"cca_params.{algo}", "must be a table of parameter tables")
        cca_params[algo] = {
            p: _setting(file, s, f"cca_params.{algo}.{p}", None) for p, s in params.items()
        }

    knobs: dict[str, Setting] = {}
    raw_knobs = doc.get("knobs", {})
    if not isinstance(raw_knobs, dict):
        raise _fail(file, "knobs", "must be a table of knob tables")
    known = list(catalog.knobs)
    for k, s in raw_knobs.items():
        if k not in catalog.knobs:
            near = nearest(k, known)
            hint = f" (did you mean '{near}'?)" if near else ""
            raise _fail(file, f"knobs.{k}", f"unknown knob{hint}; see `tcplab list knobs`")
        param = catalog.knobs[k]
        knobs[k] = _setting(file, s, f"knobs.{k}", lambda raw, p=param: convert_knob(p, raw))
    order = {n: i for i, n in enumerate(known)}
    knobs = dict(sorted(knobs.items(), key=lambda kv: order[kv[0]]))
    return Stack(
        name=name,
        description=description,
        os=os_name,
        version=version,
        file=file,
        cca=cca,
        cca_setting=cca_setting,
        cca_params=cca_params,
        knobs=knobs,
        notes=notes,
    )


_lock = threading.Lock()
_cache: dict[str, Stack] = {}


def get(name: str, catalog: Catalog | None = None) -> Stack:
    """The personality *name*, validated; StackError (with the nearest name) if unknown.

    Validated against *catalog* (default: the built engine's, and then cached)."""
    files = _files()
    if not isinstance(name, str) or name not in files:
        raise StackError(unknown_message(name, list(files)))
    # The built engine's catalog is loaded once per process (catalog.default_catalog), so a
    # personality validated against it is cached whether the caller passed it or not: the
    # scenario loader passes it, and parsed two personality files again for every scenario
    # (414 parses, 1.9 s of the 15 s of CPU that `tcplab identify` took on a 60-s capture).
    if catalog is None:
        catalog = default_catalog()
    cached = catalog is default_catalog()
    with _lock:
        if cached and name in _cache:
            return _cache[name]
        st = parse(files[name].read_text(encoding="utf-8"), f"{name}.toml", catalog)
        if st.name != name:
            raise _fail(f"{name}.toml", "name", f"is {st.name!r}, not the file name {name!r}")
        if cached:
            _cache[name] = st
        return st


def unknown_message(name: Any, known: list[str] | None = None) -> str:
    """'unknown stack 'x' (did you mean 'y'?)' for error messages."""
    known = names() if known is None else known
    near = nearest(name, known) if isinstance(name, str) else None
    hint = f" (did you mean '{near}'?)" if near else ""
    return f"unknown stack {name!r}{hint}; known stacks: " + ", ".join(sorted(known))


def load_all(catalog: Catalog | None = None) -> list[Stack]:
    """Every shipped personality, in :func:`names` order."""
    return [get(n, catalog) for n in names()]


# ---------------------------------------------------------------------------------------------
# Text for `tcplab list stacks` and `tcplab show stack NAME`


def show_value(param: Param, value: Any) -> str:
    """A normalized knob value in scenario notation (``200ms``, ``64KiB``, ``true``, ``none``)."""
    from .. import units

    if value is None:
        return NONE_WORD
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if param.kind == "duration":
            return units.format_duration(value)
        if param.kind == "bytes":
            return units.format_bytes(value)
        if param.kind == "rate":
            return units.format_rate(value)
    return str(value)


def _mark(s: Setting) -> str:
    tags = []
    if not s.verified:
        tags.append("UNVERIFIED (assumption)")
    if s.approximate:
        tags.append("APPROXIMATE (simplified model)")
    if s.fitted:
        tags.append(f"FITTED to {s.fitted} (not agreement)")
    return "; ".join(tags)


def format_list(catalog: Catalog | None = None) -> str:
    """One line per stack: name, default CCA (with this stack's parameters), description."""
    stacks = load_all(catalog)
    width = max(len(s.name) for s in stacks)
    cwidth = max(len(s.cca) for s in stacks)
    lines = [f"{'stack':<{width}}  {'cca':<{cwidth}}  description"]
    for st in stacks:
        lines.append(f"{st.name:<{width}}  {st.cca:<{cwidth}}  {st.description}")
    lines.append("")
    lines.append("`tcplab show stack NAME` lists every knob of a stack with its source.")
    return "\n".join(lines)


def format_show(st: Stack, catalog: Catalog | None = None) -> str:
    """Every knob of *st*: value, whether it differs from the engine default, and its source;
    assumptions are marked UNVERIFIED, simplified models APPROXIMATE."""
    if catalog is None:
        catalog = default_catalog()
    os_line = f"os: {st.os}" + (f" {st.version}" if st.version else "")
    lines = [f"{st.name}: {st.description}", os_line]
    if st.notes:
        lines.append(f"notes: {st.notes}")
    lines.append(f"file: python/tcplab/stacks/{st.file}")
    lines.append("")
    lines.append(f"default congestion control: {st.default_cca_text()}")
    if st.cca not in catalog.ccas:
        lines.append(f"  (this build of the engine does not provide '{st.cca}')")
    lines.append(f"    source: {st.cca_setting.source}")
    for extra in (_mark(st.cca_setting), st.cca_setting.note):
        if extra:
            lines.append(f"    {extra}")
    if st.cca_params:
        lines.append("congestion-control parameters of this stack (used whenever a flow runs it):")
        for algo, params in st.cca_params.items():
            for pname, s in params.items():
                lines.append(f"  {algo}.{pname} = {_toml_value(s.raw)}")
                lines.append(f"      source: {s.source}")
                for extra in (_mark(s), s.note):
                    if extra:
                        lines.append(f"      {extra}")
    lines.append("")
    n_set = len(st.knobs)
    n_diff = sum(
        1 for k, s in st.knobs.items() if k in catalog.knobs and s.value != catalog.knobs[k].default
    )
    lines.append(
        f"knobs ({len(catalog.knobs)}; {n_set} set by this stack, {n_diff} differ from the engine "
        "default; '*' marks a difference):"
    )
    width = max(len(k) for k in catalog.knobs)
    for name, param in catalog.knobs.items():
        s = st.knobs.get(name)
        default = show_value(param, param.default)
        if s is None:
            value = default
            status = "engine default"
            source = (
                "not set by this stack: the engine default (generic RFC behaviour, "
                "crates/tcplab-sim/src/tcp/config.rs)"
            )
        else:
            value = show_value(param, s.value)
            if s.value != param.default:
                status = f"differs from default {default}"
            else:
                status = "same as the engine default"
            source = s.source
        star = "*" if s is not None and s.value != param.default else " "
        lines.append(f"{star} {name:<{width}}  {value:<12} [{status}]")
        lines.append(f"      source: {source}")
        if s is not None:
            for extra in (_mark(s), s.note):
                if extra:
                    lines.append(f"      {extra}")
    return "\n".join(lines)
