"""Parameter sweeps: one scenario file, many points (docs/scenario-format.md, "Sweeps").

A scenario may declare a ``[sweep]`` table. Every point of the sweep is the scenario with some of
its fields replaced, and :func:`load_points` yields one validated :class:`~tcplab.scenario.Scenario`
per point, each with a ``label`` that names it (``rtt=50ms,client=windows-xp``)::

    [sweep]
    path.rtt = ["50ms", "100ms", "200ms"]     # a product dimension: one step per value
    flow.0.window = ["8MiB", "16MiB"]         # another; the points are the product of all

    [[sweep.zip]]                              # a zipped dimension: fields varied together
    name = "client"                            # its name (a column of sweep.csv); default zip<i>
    label = ["xp", "vista"]                    # step labels (default: field=value, ...)
    "flow.0.receiver_stack" = ["windows-xp", "windows-vista"]
    "flow.1.receiver_stack" = ["windows-xp", "windows-vista"]

    [[sweep.zip]]                              # a zip may give several coordinates per step:
    name = "pair"                              # (columns client1, client2 of sweep.csv; the
    coords.client1 = ["xp", "xp", "vista"]     # label is "client1=xp,client2=vista" unless
    coords.client2 = ["xp", "vista", "vista"]  # label = [...] is given)
    "flow.0.receiver_stack" = ["windows-xp", "windows-xp", "windows-vista"]
    "flow.1.receiver_stack" = ["windows-xp", "windows-vista", "windows-vista"]

    [[sweep.point]]                            # named points: an explicit list of cases
    label = "slow"                             # (the list is one dimension, named "point";
    coords = { rate = "2Mbit" }                #  optional coordinates, as for a zip)
    path.rate = "2Mbit"
    [[sweep.point]]
    label = "fast"
    path.rate = "1Gbit"
    duration = "30s"

Fields are dotted paths, exactly as for ``--set`` (``flow.0.cca``, ``flow.cubic.window``,
``path.reverse.loss``; a ``[[flow]]`` or ``[[host]]`` by index or name), written as dotted keys or
quoted. Values are TOML values as the scenario would hold them (``"50ms"``, ``8``, inline tables,
whole arrays such as ``flow = [{...}, {...}]`` for a point with other flows). The points are the
Cartesian product of the dimensions in file order (product fields, then zips, then the named
points); a point's label joins its steps' labels with ``,``: ``rtt=50ms`` for a product field
(the field's last component, or the whole path when two product fields share it),
``client=xp`` for a named zip, the step's label for an unnamed zip or a named point; each point
also has its *coordinates*, the step per dimension (``{"path.rtt": "50ms", "client": "xp"}``),
which are the columns of ``sweep.csv`` and the keys of ``tcplab reproduce`` tables. Labels are
unique and safe as directory names (characters other than letters, digits and ``._=,+-`` become
``_``). Errors name the sweep field (``sweep.path.rtt``, ``sweep.zip.0``) or, for a value the
scenario rejects, the field with ``(from sweep point 'rtt=abc')``.

:func:`run_sweep` runs every trial of every point in one pool of threads (the simulator releases
the GIL), longest first, and returns a :class:`SweepResult`: one :class:`~tcplab.results.Result`
per point plus :meth:`SweepResult.table`, one row per point (written as ``sweep.csv``).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import engines, executors, results
from . import scenario as scenario_mod
from .capture import capture_specs
from .catalog import Catalog
from .errors import ScenarioError, UserError
from .results import Result
from .scenario.loader import read_document
from .scenario.overrides import toml_literal
from .seeds import trial_seeds
from .store import TrialStore

__all__ = [
    "Dimension",
    "Point",
    "SweepResult",
    "coordinate_names",
    "dimensions",
    "expand",
    "format_table",
    "has_sweep",
    "load_points",
    "read_document",
    "run_sweep",
]

#: Keys of [sweep] that are not field paths.
RESERVED = ("zip", "point")
_SAFE = re.compile(r"[^A-Za-z0-9._=,+-]")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Dimension:
    """One axis of a sweep: a product field, a ``[[sweep.zip]]`` group or the named points."""

    name: str  #: column name in sweep.csv: the field path, the zip's name, or "point"
    where: str  #: where it is declared, for messages: "sweep.path.rtt", "sweep.zip.0", ...
    steps: tuple[dict[str, Any], ...]  #: per step: field → value
    labels: tuple[str, ...]  #: per step: its part of the point label ("rtt=50ms")
    values: tuple[str, ...] = ()  #: per step: its coordinate ("50ms"); default the label
    extra: tuple[dict[str, str], ...] = ()  #: per step: further coordinates (a zip's coords)


@dataclass
class Point:
    """One point of a sweep: its label, its step label per dimension, the values it sets."""

    label: str
    index: int
    coords: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    doc: dict[str, Any] = field(default_factory=dict, repr=False)
    #: canonical (index-based) path of each field the point sets → the sweep field
    origins: dict[str, str] = field(default_factory=dict, repr=False)


# ---------------------------------------------------------------------------------------------
# Reading and expanding


def has_sweep(source: str | os.PathLike[str] | Mapping[str, Any]) -> bool:
    """Whether *source* declares a ``[sweep]``."""
    doc, _ = read_document(source)
    return "sweep" in doc


def _value_label(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (str, int)):
        return str(v)
    if isinstance(v, Mapping):
        if isinstance(v.get("name"), str):
            rest = [f"{k}={_value_label(x)}" for k, x in v.items() if k != "name"]
            return v["name"] + ("(" + ";".join(rest) + ")" if rest else "")
        return ";".join(f"{k}={_value_label(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "+".join(_value_label(x) for x in v)
    return str(v)


def _safe(label: str) -> str:
    return _SAFE.sub("_", label)


def _flatten(node: Any, prefix: str, file: str) -> list[tuple[str, list[Any]]]:
    """The product fields of [sweep]: dotted keys down to the first array."""
    out: list[tuple[str, list[Any]]] = []
    for k, v in node.items():
        path = f"{prefix}.{k}" if prefix else k
        if not prefix and k in RESERVED:
            continue
        if isinstance(v, list):
            if not v:
                raise ScenarioError(
                    file,
                    f"sweep.{path}",
                    "is an empty list: a sweep field needs at least one value",
                    value=v,
                    has_value=True,
                    allowed="a non-empty array of values, one per step",
                )
            out.append((path, v))
        elif isinstance(v, dict):
            out.extend(_flatten(v, path, file))
        else:
            raise ScenarioError(
                file,
                f"sweep.{path}",
                "is a single value, not a list of values to sweep",
                value=v,
                has_value=True,
                allowed=f"an array, e.g. {path} = [value1, value2] (or [[sweep.point]] tables)",
            )
    return out


def _point_fields(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Fields of a named point: tables are walked down to their values (``path.rate = ...`` and
    ``[sweep.point.path] rate = ...`` set path.rate only), except the values that are tables
    themselves, ``cca`` and ``...loss``, which are replaced whole."""
    out: dict[str, Any] = {}
    for k, v in node.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v and not (k == "cca" or k.endswith("loss")):
            out.update(_point_fields(v, path))
        else:
            out[path] = v
    return out


def _tables(value: Any, where: str, file: str) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and all(isinstance(x, dict) for x in value):
        return value
    raise ScenarioError(
        file,
        where,
        "must be a table or an array of tables",
        value=value,
        has_value=True,
        allowed=f"[[{where}]] tables",
    )


def dimensions(doc: Mapping[str, Any], file: str = "<scenario>") -> list[Dimension]:
    """The dimensions of the ``[sweep]`` of *doc* (empty without one), checked."""
    spec = doc.get("sweep")
    if spec is None:
        return []
    if not isinstance(spec, dict):
        raise ScenarioError(
            file, "sweep", "must be a table", value=spec, has_value=True, allowed="a [sweep] table"
        )
    dims: list[Dimension] = []
    product = _flatten(spec, "", file)
    shorts = [p.rsplit(".", 1)[-1] for p, _ in product]
    for (path, values), short in zip(product, shorts, strict=True):
        prefix = short if shorts.count(short) == 1 else path
        dims.append(
            Dimension(
                name=path,
                where=f"sweep.{path}",
                steps=tuple({path: v} for v in values),
                labels=tuple(f"{prefix}={_value_label(v)}" for v in values),
                values=tuple(_value_label(v) for v in values),
            )
        )
    for i, table in enumerate(_tables(spec.get("zip", []), "sweep.zip", file)):
        where = f"sweep.zip.{i}"
        name = table.get("name", f"zip{i}")
        if not isinstance(name, str) or not name:
            raise ScenarioError(
                file, f"{where}.name", "must be a non-empty string", value=name, has_value=True
            )
        labels = table.get("label")
        fields = _flatten(
            {k: v for k, v in table.items() if k not in ("name", "label", "coords")}, "", file
        )
        if not fields:
            raise ScenarioError(
                file,
                where,
                "has no fields to vary",
                allowed='field = [values] entries, e.g. "flow.0.cca" = ["reno", "cubic"]',
            )
        n = len(fields[0][1])
        for p, v in fields[1:]:
            if len(v) != n:
                raise ScenarioError(
                    file,
                    f"{where}.{p}",
                    f"has {len(v)} values but {fields[0][0]} has {n}: the fields of a zip "
                    "vary together and need lists of the same length",
                    value=v,
                    has_value=True,
                    allowed=f"an array of {n} values",
                )
        extra_raw = table.get("coords", {})
        if not isinstance(extra_raw, dict) or not all(
            isinstance(v, list) and len(v) == n and all(isinstance(x, str) for x in v)
            for v in extra_raw.values()
        ):
            raise ScenarioError(
                file,
                f"{where}.coords",
                f"must map coordinate names to lists of {n} strings (one per step)",
                value=extra_raw,
                has_value=True,
            )
        extra = tuple({c: vals[j] for c, vals in extra_raw.items()} for j in range(n))
        if labels is None and extra_raw:
            labels = [",".join(f"{c}={v}" for c, v in e.items()) for e in extra]
            named = False
        else:
            named = "name" in table
        if labels is None:
            step_labels = [
                ",".join(f"{p.rsplit('.', 1)[-1]}={_value_label(v[j])}" for p, v in fields)
                for j in range(n)
            ]
        elif (
            not isinstance(labels, list)
            or len(labels) != n
            or not all(isinstance(x, str) and x for x in labels)
        ):
            raise ScenarioError(
                file,
                f"{where}.label",
                f"must be a list of {n} non-empty strings (one per step)",
                value=labels,
                has_value=True,
            )
        else:
            step_labels = list(labels)
        coords = tuple(step_labels)
        if named:  # a named zip: "client=windows-xp", as for a product field
            step_labels = [f"{name}={x}" for x in step_labels]
        dims.append(
            Dimension(
                name=name,
                where=where,
                steps=tuple({p: v[j] for p, v in fields} for j in range(n)),
                labels=tuple(step_labels),
                values=coords,
                extra=extra,
            )
        )
    if "point" in spec:
        steps: list[dict[str, Any]] = []
        labels_p: list[str] = []
        extras: list[dict[str, str]] = []
        for i, table in enumerate(_tables(spec["point"], "sweep.point", file)):
            label = table.get("label", f"p{i}")
            if not isinstance(label, str) or not label:
                raise ScenarioError(
                    file,
                    f"sweep.point.{i}.label",
                    "must be a non-empty string",
                    value=label,
                    has_value=True,
                )
            pc = table.get("coords", {})
            if not isinstance(pc, dict) or not all(isinstance(v, str) for v in pc.values()):
                raise ScenarioError(
                    file,
                    f"sweep.point.{i}.coords",
                    "must map coordinate names to strings",
                    value=pc,
                    has_value=True,
                )
            fields_p = _point_fields(
                {k: v for k, v in table.items() if k not in ("label", "coords")}
            )
            steps.append(fields_p)
            labels_p.append(label)
            extras.append(dict(pc))
        if not steps:
            raise ScenarioError(file, "sweep.point", "is empty", allowed="[[sweep.point]] tables")
        names = [sorted(e) for e in extras]
        if any(n != names[0] for n in names):
            raise ScenarioError(
                file,
                "sweep.point",
                "every named point needs the same coords names",
                allowed=f"coords = {{{', '.join(names[0])}}} on each point",
            )
        dims.append(
            Dimension(
                name="point",
                where="sweep.point",
                steps=tuple(steps),
                labels=tuple(labels_p),
                extra=tuple(extras) if any(extras) else (),
            )
        )
    # A field may be set by one dimension only.
    owner: dict[str, str] = {}
    for d in dims:
        for f in {f for step in d.steps for f in step}:
            if f in owner and owner[f] != d.where:
                raise ScenarioError(
                    file,
                    d.where,
                    f"sweeps field {f}, which {owner[f]} sweeps too",
                    allowed="each field in one sweep dimension (use [[sweep.zip]] to vary "
                    "fields together)",
                )
            owner[f] = d.where
    for d in dims:
        if len(set(d.labels)) != len(d.labels):
            dup = next(x for x in d.labels if d.labels.count(x) > 1)
            raise ScenarioError(
                file,
                d.where,
                f"two steps have the same label {dup!r}",
                allowed="distinct values or labels",
            )
    return dims


def coordinate_names(dims: Sequence[Dimension]) -> list[str]:
    """The coordinate names of a sweep: every dimension's name and its extra coordinates."""
    out: list[str] = []
    for d in dims:
        out.append(d.name)
        for e in d.extra[:1]:
            out.extend(k for k in e if k not in out)
    return out


#: Kept under its old name for callers (tcplab.reproduce.envelope, tests).
_toml_literal = toml_literal


def _apply(
    doc: dict[str, Any], fld: str, value: Any, label: str, file: str
) -> tuple[dict[str, Any], str]:
    """*doc* with *fld* set to *value* (as ``--set`` would), and the field's canonical path."""
    item = f"{fld}={_toml_literal(value)}"
    try:
        new, canon = scenario_mod.apply_overrides(doc, [item], file)
    except ScenarioError as e:
        problem = e.problem.replace(f"--set {item}", f"sweep point {label!r}")
        raise ScenarioError(
            file,
            f"sweep.{fld}" if not e.field else e.field,
            problem,
            allowed=e.allowed,
            origin=f"sweep field {fld}",
        ) from None
    return new, next(iter(canon), fld)


def expand(doc: Mapping[str, Any], file: str = "<scenario>") -> list[Point]:
    """The points of *doc*'s sweep: each with its document (``[sweep]`` removed). A document
    without a sweep gives one point with the empty label."""
    dims = dimensions(doc, file)
    base = {k: copy.deepcopy(v) for k, v in doc.items() if k != "sweep"}
    if not dims:
        return [Point(label="", index=0, doc=base)]
    points: list[Point] = []
    seen: dict[str, str] = {}
    for idx, combo in enumerate(itertools.product(*(range(len(d.steps)) for d in dims))):
        raw_label = ",".join(d.labels[j] for d, j in zip(dims, combo, strict=True))
        label = _safe(raw_label)
        if label in seen:
            raise ScenarioError(
                file,
                "sweep",
                f"points {seen[label]!r} and {raw_label!r} get the same label {label!r}",
                allowed="labels that differ in letters, digits or ._=,+-",
            )
        seen[label] = raw_label
        values: dict[str, Any] = {}
        coords: dict[str, str] = {}
        origins: dict[str, str] = {}
        pdoc = base
        for d, j in zip(dims, combo, strict=True):
            coords[d.name] = d.values[j] if d.values else d.labels[j]
            if d.extra:
                coords.update(d.extra[j])
            for fld, v in d.steps[j].items():
                values[fld] = v
                pdoc, canon = _apply(pdoc, fld, v, label, file)
                origins[canon] = fld
        points.append(
            Point(label=label, index=idx, coords=coords, values=values, doc=pdoc, origins=origins)
        )
    return points


def load_points(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    overrides: Iterable[str] = (),
    trials: int | None = None,
    seed: int | None = None,
    engine: str | None = None,
    catalog: Catalog | None = None,
    file: str | None = None,
    only: Container[str] | None = None,
) -> list[tuple[Point, scenario_mod.Scenario]]:
    """Expand and validate every point of *source* (a file or a parsed document).

    ``--set`` *overrides* and *trials*/*seed*/*engine* apply to every point after its sweep
    values (so ``--set path.rtt=...`` replaces a swept RTT). Every point is validated before
    anything runs. A scenario without a sweep gives one point labelled ``""``. *only* (labels)
    keeps just those points, the others neither loaded nor validated (an override that only
    some points accept, such as a parameter of one swept algorithm).
    """
    doc, name = read_document(source)
    file = file or name
    default_name = Path(file).stem if not file.startswith("<") else None
    if default_name and "name" not in doc:
        doc["name"] = default_name
    out = []
    overrides = list(overrides)
    for p in expand(doc, file):
        if only is not None and p.label not in only:
            continue
        origins = {canon: f"sweep point {p.label!r}" for canon in p.origins}
        sc = scenario_mod.load(
            p.doc,
            overrides=overrides,
            trials=trials,
            seed=seed,
            engine=engine,
            catalog=catalog,
            file=file,
            origins=origins,
        )
        out.append((p, sc))
    return out


# ---------------------------------------------------------------------------------------------
# Running


def _cost(sc: scenario_mod.Scenario) -> float:
    """A rough cost estimate (packets) of one trial, to start the longest trials first."""
    rate = sc.path.rate_bps + sc.path.reverse_rate_bps
    return rate * sc.duration_ns / 1e9 / (8 * sc.path.mtu) + len(sc.flows)


@dataclass
class SweepResult:
    """The results of a sweep: one :class:`~tcplab.results.Result` per point."""

    file: str
    points: list[Point]
    results: list[Result]
    wall_seconds: float
    out: Path | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(zip(self.points, self.results, strict=True))

    def table(self) -> pd.DataFrame:
        """One row per point: its label, its step per dimension, and per flow group the goodput
        statistics over trials (Mbit/s), mean retransmissions and RTOs; the aggregate goodput and
        Jain's index."""
        rows = []
        for p, r in self:
            s = r.summary
            row: dict[str, Any] = {"point": p.label, **p.coords, "trials": s["trials"]}
            for g, b in s["groups"].items():
                gp = b["goodput_bps"]
                for stat in ("mean", "sd", "min", "max"):
                    row[f"{g}.goodput_mbps_{stat}"] = gp[stat] / 1e6
                for c in ("retransmits", "timeouts"):
                    row[f"{g}.{c}_mean"] = b[c]["mean"] if b[c] else math.nan
            ag = s["aggregate"]
            row["aggregate.goodput_mbps_mean"] = ag["goodput_bps"]["mean"] / 1e6
            row["jain"] = ag["jain_index"] if ag["jain_index"] is not None else math.nan
            rows.append(row)
        return pd.DataFrame(rows)

    def write(self, out: str | os.PathLike[str], *, plots: bool = True) -> Path:
        """Write ``sweep.csv``, ``sweep.json`` and ``points/<label>/`` (a run directory per
        point) into *out*, atomically."""

        def fill(d: Path) -> None:
            self.table().to_csv(d / "sweep.csv", index=False)
            doc = {
                "file": self.file,
                "wall_seconds": self.wall_seconds,
                "points": [
                    {"label": p.label, "coords": p.coords, "values": p.values} for p in self.points
                ],
            }
            (d / "sweep.json").write_text(
                json.dumps(results._clean(doc), indent=2, default=str) + "\n", encoding="utf-8"
            )
            (d / "points").mkdir()
            for p, r in self:
                _write_point(r, d / "points" / (p.label or "base"), plots=plots)

        self.out = results.write_atomic(Path(out), fill)
        for p, r in self:
            r.out = self.out / "points" / (p.label or "base")
            if r.captures:
                r.captures = [r.out / "pcap" / c.name for c in r.captures]
        return self.out


def _write_point(r: Result, d: Path, *, plots: bool) -> None:
    """A point's run directory (as ``tcplab run`` writes it), optionally without the plots."""
    if plots:
        r.write(d)
        return
    from . import plots as plots_mod

    saved = plots_mod.write_plots
    try:  # Result.write always plots; skip it for bulk runs (matplotlib dominates their time)
        plots_mod.write_plots = lambda result, directory: None  # type: ignore[assignment]
        r.write(d)
    finally:
        plots_mod.write_plots = saved


def run_sweep(
    loaded: Sequence[tuple[Point, scenario_mod.Scenario]],
    *,
    file: str = "<scenario>",
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    plots: bool = True,
    executor: str | executors.Executor | None = None,
    ray_address: str | None = None,
    store: TrialStore | None = None,
    rerun_invalid: int | None = None,
) -> SweepResult:
    """Run every trial of every point of *loaded* (from :func:`load_points`) in one pool of
    *jobs* threads (default: the CPU count) or on *executor* (:mod:`tcplab.executors`), longest
    trials first; results are identical to running the points one by one. *store*: reuse and
    keep trials (``--resume``, :mod:`tcplab.store`). *rerun_invalid*: kernel engine only, as for
    :func:`tcplab.runner.run`. With *out*, write the sweep directory (see
    :meth:`SweepResult.write`)."""
    from . import __version__

    if out is not None:
        results.check_out(out)
    engine_names = {sc.engine for _, sc in loaded}
    if len(engine_names) > 1:
        raise UserError(
            f"{file}: the points of a sweep use different engines ({', '.join(engine_names)})"
        )
    engine_name = engine_names.pop() if engine_names else "sim"
    if rerun_invalid is not None:
        engines.check_rerun_invalid(rerun_invalid, engine_name)
    engines.get_engine(engine_name)  # EngineUnavailable before anything runs
    if executor is None or isinstance(executor, str):
        executor = executors.get_executor(
            executor,
            jobs=jobs,
            ray_address=ray_address,
            scenario_run=loaded[0][1].run_options if loaded else None,
        )
    per_point: list[tuple[list[int], list[dict[str, Any]]]] = []
    flat: list[tuple[float, int, int]] = []  # (cost, point, trial)
    scratch: list[Path] = []
    for i, (_, sc) in enumerate(loaded):
        seeds = trial_seeds(sc.seed, sc.trials)
        configs = [sc.config(s) for s in seeds]
        if rerun_invalid is not None:
            engines.set_rerun_invalid(configs, rerun_invalid)
        if sc.capture:
            cdir = Path(tempfile.mkdtemp(prefix="tcplab-pcap-"))
            scratch.append(cdir)
            configs[0]["capture"] = capture_specs(configs[0], list(sc.capture), cdir)
        per_point.append((seeds, configs))
        c = _cost(sc)
        flat.extend((c, i, k) for k in range(len(configs)))
    # Longest trials first; the flat list stays in (point, trial) order for the results.
    order = sorted(range(len(flat)), key=lambda j: -flat[j][0])
    labels = [f"point {loaded[i][0].label or 'base'} trial {k}" for _, i, k in flat]
    t0 = time.perf_counter()
    raws, seconds = executors.run_trials(
        engine_name,
        [per_point[i][1][k] for _, i, k in flat],
        executor=executor,
        order=order,
        progress=progress,
        store=store,
        labels=labels,
    )
    wall = time.perf_counter() - t0
    by_point: list[list[dict[str, Any] | None]] = [[None] * len(c) for _, c in per_point]
    secs_point: list[list[float]] = [[0.0] * len(c) for _, c in per_point]
    for (_, i, k), raw, secs in zip(flat, raws, seconds, strict=True):
        by_point[i][k] = raw
        secs_point[i][k] = secs
    res = []
    for i, (_, sc) in enumerate(loaded):
        seeds, configs = per_point[i]
        r = Result(sc, seeds, configs, [x for x in by_point[i] if x is not None], wall, __version__)
        #: engine seconds of each trial (summed over a point: its share of the pool's work)
        r.trial_seconds = secs_point[i]  # type: ignore[attr-defined]
        if "capture" in configs[0]:
            r.captures = [Path(c["path"]) for c in configs[0]["capture"]]
        res.append(r)
    sweep = SweepResult(file=file, points=[p for p, _ in loaded], results=res, wall_seconds=wall)
    if out is not None:
        sweep.write(out, plots=plots)
    return sweep


def format_table(sweep: SweepResult) -> str:
    """The table ``tcplab run`` prints for a sweep: one row per point, the mean goodput of each
    flow group (Mbit/s), the aggregate and Jain's index."""
    groups: list[str] = []
    for r in sweep.results:
        for g in r.summary["groups"]:
            if g not in groups:
                groups.append(g)
    width = max([len("point"), *(len(p.label) for p in sweep.points)])
    gw = [max(10, len(g)) for g in groups]
    head = f"{'point':<{width}} " + " ".join(f"{g:>{w}}" for g, w in zip(groups, gw, strict=True))
    head += f" {'aggregate':>10} {'jain':>7}"
    n = sweep.results[0].summary["trials"] if sweep.results else 0
    lines = [
        f"{sweep.file}: {len(sweep.points)} point(s) x {n} trial(s); mean goodput (Mbit/s) "
        "over trials",
        "",
        head,
        "-" * len(head),
    ]
    for p, r in sweep:
        s = r.summary
        cells = []
        for g, w in zip(groups, gw, strict=True):
            b = s["groups"].get(g)
            cells.append(f"{b['goodput_bps']['mean'] / 1e6:>{w}.3f}" if b else f"{'-':>{w}}")
        ag = s["aggregate"]
        j = ag["jain_index"]
        lines.append(
            f"{p.label:<{width}} "
            + " ".join(cells)
            + f" {ag['goodput_bps']['mean'] / 1e6:>10.3f} "
            + (f"{j:>7.4f}" if j is not None and len(ag["jain_groups"]) > 1 else f"{'-':>7}")
        )
    lines.append("-" * len(head))
    lines.append(f"wall time {sweep.wall_seconds:.2f} s")
    return "\n".join(lines)
