"""Validating a whole scenario document: the top-level keys, ``[run]``, ``[sweep]``/``[report]``/
``[assume]``, then the path, hosts and flows (:mod:`.topology`, :mod:`.flows`,
:mod:`.personality`), into a :class:`~tcplab.scenario.model.Scenario`."""

from __future__ import annotations

import copy
from typing import Any

from .. import units
from ..catalog import Catalog
from ..seeds import MAX_SEED
from .background import validate_all as validate_background
from .defaults import (
    DEFAULT_DURATION,
    DEFAULT_INTERVAL,
    DEFAULT_STACK,
    ENGINES,
    MAX_SAMPLES,
    RUN_KEYS,
    SCENARIO_NAME_RE,
    TOP_KEYS,
)
from .fields import (
    MISSING,
    Ctx,
    Invalid,
    Table,
    as_bool,
    as_choice,
    as_int,
    as_pos_duration,
    as_str_list,
    as_text,
)
from .flows import validate_flow
from .hosts import check_hosts
from .model import Flow, Host, Scenario
from .personality import stack_name, validate_knobs
from .schedule import with_schedule
from .topology import network, validate_host, validate_path


def validate(ctx: Ctx, doc: dict[str, Any], catalog: Catalog, default_name: str) -> Scenario:
    top = Table(ctx, doc, "", TOP_KEYS, "a scenario")

    def scen_name(v: Any) -> str:
        if not isinstance(v, str) or not SCENARIO_NAME_RE.match(v):
            raise Invalid(
                "is not a valid scenario name",
                "letters, digits, '_', '-' and '.', starting with a letter or digit",
            )
        return v

    if not SCENARIO_NAME_RE.match(default_name):
        default_name = "scenario"
    name = top.take("name", scen_name, default=default_name, literal=default_name)
    description = top.take("description", as_text(), default="", literal="")
    seed = top.take("seed", as_int(0, MAX_SEED), default=1, literal=1)
    duration = top.take(
        "duration",
        as_pos_duration,
        default=units.parse_duration(DEFAULT_DURATION),
        literal=DEFAULT_DURATION,
    )
    interval = top.take(
        "interval",
        as_pos_duration,
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
    trials = top.take("trials", as_int(1, 100_000), default=1, literal=1)
    engine = top.take("engine", as_choice(ENGINES), default="sim", literal="sim")
    record_changes = top.take("record_changes", as_bool, default=False, literal=False)
    capture = tuple(top.take("capture", as_str_list, default=[], literal=[]))
    _sweep_and_report(top)
    run_options = _run_table(ctx, doc)

    if not top.has("path"):
        raise ctx.error("path", "missing (required)", allowed="a [path] table with at least rate")
    path, path_resolved = validate_path(ctx, doc["path"])
    if isinstance(doc["path"], dict) and "schedule" in doc["path"]:  # time-varying path
        path, path_resolved = with_schedule(
            ctx, doc["path"]["schedule"], path, path_resolved, duration
        )

    hosts_raw = doc.get("host", [])
    if not isinstance(hosts_raw, list):
        raise ctx.error("host", "must be an array of tables", hosts_raw, "[[host]] tables")
    hosts: list[Host] = []
    hosts_resolved: list[dict[str, Any]] = []
    for i, h in enumerate(hosts_raw):
        host, res = validate_host(ctx, h, f"host.{i}", path, hosts)
        hosts.append(host)
        hosts_resolved.append(res)

    tcp_defaults: dict[str, Any] = {}
    tcp_raw = doc.get("tcp", {})
    if top.has("tcp"):
        tcp_defaults = validate_knobs(ctx, tcp_raw, "tcp", catalog)
    stack = top.take("stack", stack_name(catalog), default=DEFAULT_STACK, literal=DEFAULT_STACK)

    flows_raw = doc.get("flow", MISSING)
    if flows_raw is MISSING or flows_raw == []:
        raise ctx.error("flow", "missing (required)", allowed="at least one [[flow]] table")
    if not isinstance(flows_raw, list):
        raise ctx.error("flow", "must be an array of tables (write [[flow]], not [flow])")

    named = {h.name: h for h in hosts}
    flows: list[Flow] = []
    auto_hosts: list[Host] = []
    flows_resolved: list[dict[str, Any]] = []
    groups: set[str] = set()
    for i, f in enumerate(flows_raw):
        new_flows, new_hosts, res = validate_flow(
            ctx, f, i, path, named, tcp_defaults, catalog, duration, groups, stack
        )
        flows.extend(new_flows)
        auto_hosts.extend(new_hosts)
        flows_resolved.append(res)

    check_hosts(ctx, flows, doc, engine)

    background, bg_hosts, bg_resolved = validate_background(
        ctx, doc.get("background", []), path, tcp_defaults, catalog, duration, groups, stack, engine
    )
    all_hosts = hosts + auto_hosts + bg_hosts
    nodes, links = network(path, all_hosts)

    resolved = top.ordered_resolved()
    resolved["path"] = path_resolved
    if top.has("tcp"):
        resolved["tcp"] = copy.deepcopy(tcp_raw)
    if hosts_resolved:
        resolved["host"] = hosts_resolved
    resolved["flow"] = flows_resolved
    if bg_resolved:
        resolved["background"] = bg_resolved
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
        background=background,
    )


def _run_table(ctx: Ctx, doc: dict[str, Any]) -> dict[str, str]:
    """``[run]``: ``executor`` ("local" or "ray") and ``ray_address`` (tcplab.executors). Kept in
    the resolved scenario only when written: it says where trials run, not what they compute."""
    if "run" not in doc:
        return {}
    t = Table(ctx, doc["run"], "run", RUN_KEYS, "the [run] table")
    out: dict[str, str] = {}
    ex = t.take("executor", as_choice(("local", "ray")), default=None, literal=None)
    if ex is not None:
        out["executor"] = ex
    addr = t.take(
        "ray_address",
        as_text("a Ray address such as 'auto' or '10.0.0.1:6379'"),
        default=None,
        literal=None,
    )
    if addr is not None:
        out["ray_address"] = addr
    return out


def _sweep_and_report(top: Table) -> None:
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
        from ..reproduce.envelope import parse_assumptions

        parse_assumptions({"assume": top.raw("assume")}, top.ctx.file)
        top.resolved["assume"] = copy.deepcopy(top.raw("assume"))
