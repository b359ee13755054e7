"""The ``[report]`` table of a study scenario: how its results become the paper's tables.

A study scenario (``scenarios/studies/<study>/<ID>.toml``) is an ordinary scenario, usually with a
``[sweep]`` (one point per stack, algorithm, RTT, …), plus a ``[report]`` table that
:mod:`tcplab.reproduce` reads. Everything that maps our results onto the paper is data here, with
its source; nothing in the code knows a study or scenario by name. Layout::

    [report]
    id = "J3"                              # experiment ID of seed-experiments.md
    title = "Reverse-path congestion"      # heading in the report
    source = "Jansen & McGregor 2005, poster, table 3"   # where the published numbers are
    notes = "..."                          # what disagrees and the likely model cause
    quick = { trials = 10, set = ["duration=20s"] }      # --quick: fewer trials, shorter runs

    [report.metric.goodput]                # named metrics (tcplab.reproduce.metrics)
    kind = "goodput"
    group = "measured"
    unit = "kbps"

    [[report.table]]                       # a table of ours: <out>/<study>/<ID>[-<suffix>].csv
    suffix = ""                            # e.g. "cubic" gives I5-cubic.csv
    where = { cca = "cubic" }              # only points with these sweep coordinates
    keys = ["stack"]                       # sweep dimensions that identify a row (key columns)
    metric = "goodput"                     # shorthand: columns <stat>_<unit> of one metric
    stats = ["min", "mean", "max", "sd"]
    columns = [{ name = "jain", metric = "jain", stat = "mean" }]   # and/or explicit columns
    pivot = "rtt_ms"                       # HTML only: lay this key out as columns
    mirror = { keys = ["client1", "client2"], columns = [["client1_mbps", "client2_mbps"]] }
                                           # symmetric pairs run once: add the swapped rows

    [[report.fitted]]                      # every knob chosen by looking at a published result
    knob = "path.queue"                    # the scenario field (or stack file + knob) chosen
    value = "16pkt"                        # the value it was given
    fitted_to = "the five published means of this table"   # what it was chosen to match
    how = "best of 8, 16, 32, 50 packets by mean error"     # optional: how it was chosen

    [[report.published]]                   # published numbers to compare with
    role = "independent"                   # independent | fitted (knob = ...) | input (input = ...)
                                           # or per part: { cells = "fitted", order = "fitted",
                                           #   pairs = "independent" }
    table = ""                             # suffix of our table it maps to
    source = "..."
    keys = ["stack"]
    columns = ["min_kbps", "mean_kbps", "max_kbps", "sd_kbps"]
    rows = [["linux-2.4.27", 1220, 1296, 1375, 33.3], ...]
    tolerance = 0.15                       # a cell agrees within ±15 % (relative)
    abs_tolerance = { jain = 0.01 }        # absolute tolerance per column; required for a
                                           #   bounded index (Jain's): relative would be too lax
    order = [{ column = "mean_kbps" }]     # do the rankings of rows agree? (within = key)
    pairs = [["client1_mbps", "client2_mbps"]]   # in each row, does the same side win?
    tie = 0.05                             # pairs closer than this (relative) are ties: not scored
    spread = { mean_kbps = "sd_kbps" }     # or closer than the published spread of a column

    [[report.check]]                       # a published observation, checked on our table
    role = "input"                         # as for published tables; here: a sanity check
    input = "host.0.nic_rate = 5.5Gbit"    # the configured value the check restates
    claim = "Linux delivers the most data in the first second"
    kind = "top"                           # top, bottom, only_above, order, range, ratio,
    column = "acked_kB"                    #   increasing, decreasing, less, below
    expect = ["linux-2.4.27", "linux-2.6.10"]

    [[report.figure]]                      # figures like the paper's (tcplab.reproduce.figures)
    kind = "flows"
    column = "goodput_mbps"

Every key is checked; errors name the file and the dotted field (``report.table.0.stats``).

Roles (issue "agreement report"): every ``[[report.published]]`` table and every
``[[report.check]]`` says what it is evidence of. ``independent``: nothing in the scenario or the
model was chosen by looking at it; only these count as agreement. ``fitted``: a knob was chosen to
match it (``knob`` names a ``[[report.fitted]]`` entry of this file); reported beside ours but
never counted as agreement. ``input``: the check restates a configured value (``input`` says
which); a sanity check of the plumbing, not agreement.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, UserError, nearest
from . import metrics

__all__ = [
    "CHECK_KINDS",
    "FIGURE_KINDS",
    "Report",
    "find_studies_dir",
    "parse_report",
]

REPORT_KEYS = (
    "id",
    "title",
    "source",
    "notes",
    "quick",
    "metric",
    "table",
    "published",
    "check",
    "figure",
    "fitted",
)
ROLES = ("independent", "fitted", "input")
FITTED_KEYS = ("knob", "value", "fitted_to", "how", "source")
#: Metric kinds whose values are bounded indices: a relative tolerance would be meaningless
#: (±20 % of 0.999 accepts 0.8, a 3:1 split), so published columns of them need abs_tolerance.
BOUNDED_KINDS = ("jain",)
QUICK_KEYS = ("trials", "set", "points")
METRIC_KEYS = (
    "kind",
    "group",
    "groups",
    "flow",
    "unit",
    "t",
    "t0",
    "t1",
    "column",
    "threshold",
    "field",
    "direction",
    "mss",
    "per",
)
TABLE_KEYS = (
    "suffix",
    "title",
    "where",
    "keys",
    "metric",
    "stats",
    "columns",
    "pivot",
    "mirror",
)
PUBLISHED_KEYS = (
    "table",
    "source",
    "keys",
    "columns",
    "rows",
    "tolerance",
    "order",
    "pairs",
    "tie",
    "spread",
    "abs_tolerance",
    "note",
    "role",
    "knob",
    "input",
)
CHECK_KEYS = (
    "claim",
    "source",
    "kind",
    "table",
    "column",
    "expect",
    "where",
    "lo",
    "hi",
    "a",
    "b",
    "key",
    "along",
    "threshold",
    "other",
    "factor",
    "note",
    "role",
    "knob",
    "input",
)
CHECK_KINDS = (
    "top",
    "bottom",
    "only_above",
    "order",
    "range",
    "ratio",
    "increasing",
    "decreasing",
    "less",
    "below",
    "not_modelled",
)
FIGURE_KINDS = ("tsg", "panels", "flows")
FIGURE_KEYS = (
    "kind",
    "title",
    "name",
    "where",
    "column",
    "columns",
    "group",
    "t0",
    "t1",
    "trial",
    "source",
)
_ID = re.compile(r"^[A-Z][0-9]+$")
_SUFFIX = re.compile(r"^[A-Za-z0-9_.+-]*$")


@dataclass
class Report:
    """A parsed ``[report]`` table."""

    id: str
    title: str
    source: str
    notes: str
    quick: dict[str, Any]
    metrics: dict[str, dict[str, Any]]
    tables: list[dict[str, Any]]
    published: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    figures: list[dict[str, Any]] = field(default_factory=list)
    fitted: list[dict[str, Any]] = field(default_factory=list)  #: [[report.fitted]] knobs

    def table(self, suffix: str) -> dict[str, Any]:
        for t in self.tables:
            if t["suffix"] == suffix:
                return t
        raise KeyError(suffix)


class _Err:
    def __init__(self, file: str) -> None:
        self.file = file

    def __call__(self, fld: str, problem: str, value: Any = None, allowed: str | None = None):
        return ScenarioError(
            self.file, fld, problem, value=value, has_value=value is not None, allowed=allowed
        )


def _keys(err: _Err, data: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise err(path, "must be a table", data)
    for k in data:
        if k not in allowed:
            near = nearest(k, allowed)
            hint = f" (did you mean '{near}'?)" if near else ""
            raise err(f"{path}.{k}", f"unknown key{hint}", allowed="keys " + ", ".join(allowed))
    return data


def _list_of_tables(err: _Err, data: Any, path: str) -> list[dict[str, Any]]:
    if data is None:
        return []
    if isinstance(data, dict):
        return [data]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise err(path, "must be an array of tables", data, f"[[{path}]] tables")
    return data


def _str(err: _Err, d: Mapping[str, Any], key: str, path: str, default: str | None = None) -> str:
    v = d.get(key, default)
    if not isinstance(v, str):
        raise err(f"{path}.{key}", "must be a string" if key in d else "missing", v)
    return v


PART_ROLES = ("cells", "order", "pairs")


def _role(err: _Err, d: dict[str, Any], path: str, knobs: list[str], parts: bool = False) -> None:
    """Check ``role`` (and ``knob`` / ``input``) of a published table or check, in place.

    With *parts* (a published table) the role may also be a table giving the cells, the
    rankings (``order``) and the pairs their own roles, e.g. when a knob fitted the totals of a
    table but not the split between its columns; ``role_of`` then holds one role per part."""
    role = d.get("role")
    if parts and isinstance(role, dict):
        _keys(err, role, f"{path}.role", PART_ROLES)
        for k, v in role.items():
            if v not in ROLES:
                raise err(f"{path}.role.{k}", "unknown role", v, ", ".join(ROLES))
        missing = [k for k in PART_ROLES if k not in role]
        if missing:
            raise err(f"{path}.role", f"missing {', '.join(missing)}", role, "cells, order, pairs")
        d["role_of"] = dict(role)
        roles = set(role.values())
        d["role"] = (
            "fitted" if "fitted" in roles else ("input" if "input" in roles else role["cells"])
        )
        _role_extras(err, d, path, knobs, roles)
        return
    if role is None:
        raise err(
            f"{path}.role",
            "missing: say what this is evidence of",
            allowed="'independent' (nothing was chosen by looking at it), 'fitted' (with knob = "
            "a [[report.fitted]] knob) or 'input' (with input = the configured value it restates)",
        )
    if role not in ROLES:
        raise err(f"{path}.role", "unknown role", role, ", ".join(ROLES))
    if parts:
        d["role_of"] = dict.fromkeys(PART_ROLES, role)
    _role_extras(err, d, path, knobs, {role})


def _role_extras(err: _Err, d: dict[str, Any], path: str, knobs: list[str], roles: set[str]):
    """``knob`` for a fitted role, ``input`` for an input role; neither otherwise."""
    role = "fitted" if "fitted" in roles else ("input" if "input" in roles else "independent")
    if "fitted" in roles:
        knob = d.get("knob")
        names = [knob] if isinstance(knob, str) else knob
        if not isinstance(names, list) or not names or not all(isinstance(k, str) for k in names):
            raise err(
                f"{path}.knob",
                "missing: a fitted result names the knob chosen to match it",
                knob,
                "a knob of [[report.fitted]]: " + (", ".join(knobs) or "(none declared)"),
            )
        for k in names:
            if k not in knobs:
                raise err(
                    f"{path}.knob",
                    "is not declared in [[report.fitted]]",
                    k,
                    ", ".join(knobs) or "declare it: [[report.fitted]] knob/value/fitted_to",
                )
        d["knob"] = names
    elif "knob" in d:
        raise err(f"{path}.knob", f"only a 'fitted' result names a knob (role is '{role}')")
    if "input" in roles:
        inp = d.get("input")
        if not isinstance(inp, str) or not inp.strip():
            raise err(
                f"{path}.input",
                "missing: an input check names the configured value it restates",
                inp,
                "a string, e.g. 'host.0.nic_rate = 5.5Gbit'",
            )
    elif "input" in d:
        raise err(f"{path}.input", f"only an 'input' result names an input (role is '{role}')")


def parse_report(doc: Mapping[str, Any], file: str, dims: list[str]) -> Report:
    """Check and parse the ``[report]`` of *doc*; *dims* are the names of its sweep dimensions
    (which ``keys``, ``where`` and ``pivot`` may use)."""
    err = _Err(file)
    if "report" not in doc:
        raise err("report", "missing (a study scenario needs a [report] table)")
    r = _keys(err, doc["report"], "report", REPORT_KEYS)
    rid = _str(err, r, "id", "report")
    if not _ID.match(rid):
        raise err("report.id", "is not an experiment ID", rid, "a letter and a number, e.g. 'J3'")
    quick = _keys(err, r.get("quick", {}), "report.quick", QUICK_KEYS)
    if "trials" in quick and (not isinstance(quick["trials"], int) or quick["trials"] < 1):
        raise err("report.quick.trials", "must be an integer ≥ 1", quick["trials"])
    for k in ("set", "points"):
        if k in quick and (
            not isinstance(quick[k], list) or not all(isinstance(x, str) for x in quick[k])
        ):
            raise err(f"report.quick.{k}", "must be a list of strings", quick[k])

    mets: dict[str, dict[str, Any]] = {}
    for name, m in (r.get("metric") or {}).items():
        path = f"report.metric.{name}"
        m = _keys(err, m, path, METRIC_KEYS)
        kind = m.get("kind")
        if kind not in metrics.KINDS:
            near = nearest(kind, metrics.KINDS) if isinstance(kind, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise err(f"{path}.kind", f"unknown metric kind{hint}", kind, ", ".join(metrics.KINDS))
        if m.get("unit", "") not in metrics.UNITS:
            raise err(f"{path}.unit", "unknown unit", m.get("unit"), ", ".join(metrics.UNITS))
        need = {
            "series_at": ("column", "t"),
            "counter": ("column",),
            "time_to": ("threshold",),
            "trace": ("field",),
        }.get(kind, ())
        for k in need:
            if k not in m:
                raise err(f"{path}.{k}", f"missing (required for kind '{kind}')")
        mets[name] = dict(m)

    tables = []
    for i, t in enumerate(_list_of_tables(err, r.get("table"), "report.table")):
        path = f"report.table.{i}"
        t = dict(_keys(err, t, path, TABLE_KEYS))
        t.setdefault("suffix", "")
        if not isinstance(t["suffix"], str) or not _SUFFIX.match(t["suffix"]):
            raise err(f"{path}.suffix", "must be letters, digits, _ . + -", t["suffix"])
        if any(x["suffix"] == t["suffix"] for x in tables):
            raise err(f"{path}.suffix", "is used by another table", t["suffix"])
        keys = t.get("keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise err(f"{path}.keys", "must be a list of sweep dimension names", keys)
        for k in keys:
            if k not in dims:
                raise err(
                    f"{path}.keys",
                    f"'{k}' is not a sweep dimension",
                    keys,
                    "names of sweep dimensions: " + ", ".join(dims),
                )
        where = t.get("where", {})
        if not isinstance(where, dict) or any(k not in dims for k in where):
            raise err(f"{path}.where", "must map sweep dimensions to values", where)
        cols: list[dict[str, Any]] = []
        if "metric" in t:
            mname = t["metric"]
            if mname not in mets:
                raise err(f"{path}.metric", "is not a [report.metric.*] name", mname)
            stats = t.get("stats", ["mean"])
            unit = mets[mname].get("unit", "")
            for s in stats:
                if not isinstance(s, str) or not metrics.valid_stat(s):
                    raise err(f"{path}.stats", f"unknown statistic {s!r}", stats)
                cname = s if not unit else f"{s}_{unit}"
                cols.append({"name": cname, "metric": mname, "stat": s})
        for j, c in enumerate(t.get("columns", [])):
            cpath = f"{path}.columns.{j}"
            c = _keys(err, c, cpath, ("name", "metric", "stat"))
            if c.get("metric") not in mets:
                raise err(f"{cpath}.metric", "is not a [report.metric.*] name", c.get("metric"))
            s = c.get("stat", "mean")
            if not metrics.valid_stat(s):
                raise err(f"{cpath}.stat", "unknown statistic", s)
            cols.append({"name": _str(err, c, "name", cpath), "metric": c["metric"], "stat": s})
        if not cols:
            raise err(path, "has no columns", allowed="metric + stats, or columns = [...]")
        names = [c["name"] for c in cols]
        if len(set(names)) != len(names):
            raise err(f"{path}.columns", "two columns have the same name", names)
        if "pivot" in t and t["pivot"] not in keys:
            raise err(f"{path}.pivot", "must be one of the table's keys", t["pivot"])
        if "mirror" in t:
            mir = _keys(err, t["mirror"], f"{path}.mirror", ("keys", "columns"))
            mk, mc = mir.get("keys"), mir.get("columns", [])
            if not (isinstance(mk, list) and len(mk) == 2 and all(k in keys for k in mk)):
                raise err(f"{path}.mirror.keys", "must be two of the table's keys", mk)
            if not all(
                isinstance(pr, list) and len(pr) == 2 and all(c in names for c in pr) for pr in mc
            ):
                raise err(f"{path}.mirror.columns", "must be pairs of column names", mc)
        t["keys"] = keys
        t["where"] = where
        t["columns"] = cols
        tables.append(t)
    if not tables:
        raise err("report.table", "missing: a study scenario reports at least one table")
    suffixes = [t["suffix"] for t in tables]

    fitted = []
    for i, f in enumerate(_list_of_tables(err, r.get("fitted"), "report.fitted")):
        path = f"report.fitted.{i}"
        f = dict(_keys(err, f, path, FITTED_KEYS))
        for k in ("knob", "fitted_to"):
            if not isinstance(f.get(k), str) or not f[k].strip():
                raise err(f"{path}.{k}", "missing (must be a non-empty string)", f.get(k))
        if "value" not in f:
            raise err(f"{path}.value", "missing: the value the knob was given")
        if any(x["knob"] == f["knob"] for x in fitted):
            raise err(f"{path}.knob", "is declared twice", f["knob"])
        fitted.append(f)
    knobs = [f["knob"] for f in fitted]

    pubs = []
    for i, p in enumerate(_list_of_tables(err, r.get("published"), "report.published")):
        path = f"report.published.{i}"
        p = dict(_keys(err, p, path, PUBLISHED_KEYS))
        _role(err, p, path, knobs, parts=True)
        p.setdefault("table", "")
        if p["table"] not in suffixes:
            raise err(f"{path}.table", "names no [[report.table]] suffix", p["table"], suffixes)
        ours = tables[suffixes.index(p["table"])]
        keys = p.get("keys", ours["keys"])
        cols = p.get("columns")
        if not isinstance(cols, list) or not cols:
            raise err(f"{path}.columns", "must be a non-empty list of column names", cols)
        known = [c["name"] for c in ours["columns"]]
        for c in cols:
            if c not in known:
                raise err(f"{path}.columns", f"'{c}' is not a column of our table", cols, known)
        rows = p.get("rows")
        if not isinstance(rows, list) or not rows:
            raise err(f"{path}.rows", "must be a non-empty list of rows", rows)
        for j, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(keys) + len(cols):
                raise err(
                    f"{path}.rows.{j}",
                    f"must have {len(keys)} key(s) then {len(cols)} value(s)",
                    row,
                )
        p["keys"] = keys
        p.setdefault("tolerance", 0.2)
        p.setdefault("order", [])
        p.setdefault("pairs", [])
        for j, o in enumerate(p["order"]):
            _keys(err, o, f"{path}.order.{j}", ("column", "within"))
            if o.get("column") not in cols:
                raise err(f"{path}.order.{j}.column", "is not a published column", o.get("column"))
        for j, pr in enumerate(p["pairs"]):
            if not (isinstance(pr, list) and len(pr) == 2 and all(c in cols for c in pr)):
                raise err(f"{path}.pairs.{j}", "must be two published column names", pr)
        tie = p.setdefault("tie", 0.05)
        if isinstance(tie, bool) or not isinstance(tie, (int, float)) or not 0 <= tie < 1:
            raise err(f"{path}.tie", "must be a relative difference in [0, 1)", tie)
        spread = p.setdefault("spread", {})
        if not isinstance(spread, dict) or any(
            k not in cols or v not in cols for k, v in spread.items()
        ):
            raise err(
                f"{path}.spread",
                "must map published columns to the published columns of their spread",
                spread,
                "e.g. { mean_kbps = 'sd_kbps' }",
            )
        abs_tol = p.setdefault("abs_tolerance", {})
        if not isinstance(abs_tol, dict) or any(
            k not in cols or isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0
            for k, v in abs_tol.items()
        ):
            raise err(
                f"{path}.abs_tolerance",
                "must map published columns to absolute tolerances ≥ 0",
                abs_tol,
            )
        by_name = {c["name"]: c for c in ours["columns"]}
        for c in cols:
            kind = mets[by_name[c]["metric"]]["kind"]
            if kind in BOUNDED_KINDS and c not in abs_tol:
                raise err(
                    f"{path}.abs_tolerance",
                    f"column '{c}' is a bounded index ({kind}): a relative tolerance would "
                    "accept far-off values (±20 % of 0.999 is 0.8, a 3:1 split)",
                    allowed=f"abs_tolerance = {{ {c} = 0.01 }} (state it in the scenario)",
                )
        p["mirror"] = ours.get("mirror")
        pubs.append(p)

    checks = []
    for i, c in enumerate(_list_of_tables(err, r.get("check"), "report.check")):
        path = f"report.check.{i}"
        c = dict(_keys(err, c, path, CHECK_KEYS))
        _str(err, c, "claim", path)
        _role(err, c, path, knobs)
        if c.get("kind") not in CHECK_KINDS:
            raise err(f"{path}.kind", "unknown check kind", c.get("kind"), ", ".join(CHECK_KINDS))
        c.setdefault("table", "")
        if c["table"] not in suffixes:
            raise err(f"{path}.table", "names no [[report.table]] suffix", c["table"])
        known = [x["name"] for x in tables[suffixes.index(c["table"])]["columns"]]
        if c["kind"] == "not_modelled":
            checks.append(c)
            continue
        for k in ("column", "other") if c["kind"] == "below" else ("column",):
            if c.get(k) not in known:
                raise err(f"{path}.{k}", "is not a column of the table", c.get(k), known)
        checks.append(c)

    figs = []
    for i, f in enumerate(_list_of_tables(err, r.get("figure"), "report.figure")):
        path = f"report.figure.{i}"
        f = dict(_keys(err, f, path, FIGURE_KEYS))
        if f.get("kind") not in FIGURE_KINDS:
            raise err(f"{path}.kind", "unknown figure kind", f.get("kind"), FIGURE_KINDS)
        f.setdefault("name", f"{rid}-{f['kind']}{i}")
        figs.append(f)

    return Report(
        id=rid,
        title=r.get("title", rid),
        source=r.get("source", ""),
        notes=r.get("notes", ""),
        quick=dict(quick),
        metrics=mets,
        tables=tables,
        published=pubs,
        checks=checks,
        figures=figs,
        fitted=fitted,
    )


def find_studies_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding ``<study>/<ID>.toml``: *given*, ``$TCPLAB_STUDIES``, or the study
    scenarios installed with the package (tcplab.bundled)."""
    cands: list[Path] = []
    if given:
        cands.append(Path(given))
    elif os.environ.get("TCPLAB_STUDIES"):
        cands.append(Path(os.environ["TCPLAB_STUDIES"]))
    else:
        from ..bundled import scenarios_dir

        cands.append(scenarios_dir() / "studies")
    for c in cands:
        if c.is_dir():
            return c
    raise UserError(
        "cannot find the study scenarios (looked in "
        + ", ".join(str(c) for c in cands)
        + "); pass --studies-dir"
    )
