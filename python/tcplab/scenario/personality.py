"""TCP knobs, stack personalities and congestion control of a scenario's TCP flows.

A TCP flow's two end hosts each run a personality (python/tcplab/stacks). Their knobs resolve as
personality → ``[tcp]`` → ``window`` → ``[flow.tcp]`` (→ ``[flow.receiver_tcp]`` on the
receiver), with the personality rules of :mod:`tcplab.stacks.rules`; the CCA defaults to the
sender stack's, with that stack's parameters for its implementation of the algorithm
(docs/scenario-format.md, "Stacks")."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import stacks as stacks_mod
from ..catalog import Catalog, ParamError
from ..errors import nearest
from ..stacks import rules
from ..units import UnitError
from .defaults import DEFAULT_CCA
from .fields import Ctx, Invalid, Table, as_pos_bytes, join, tname
from .hosts import check_host_knob


def validate_knobs(ctx: Ctx, data: Any, path: str, catalog: Catalog) -> dict[str, Any]:
    names = list(catalog.knobs)
    t = Table(ctx, data, path, names, "TCP knobs (see `tcplab list knobs`)")
    out: dict[str, Any] = {}
    for name in names:
        if name in t.data:
            knob = catalog.knobs[name]
            # "none" unsets an optional knob (TOML has no null), e.g. a stack's rx_capacity.
            # The end-host knobs (.hosts) have ranges of their own.
            out[name] = t.take(
                name, lambda v, k=knob: check_host_knob(k.name, stacks_mod.convert_knob(k, v))
            )
    return out


def stack_name(catalog: Catalog) -> Callable[[Any], str]:
    """Converter of a stack name: unknown names get the nearest one; a personality file that does
    not validate against the engine's knobs is reported too."""

    def conv(v: Any) -> str:
        known = stacks_mod.names()
        if not isinstance(v, str) or v not in known:
            near = nearest(v, known) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise Invalid(
                f"unknown stack{hint}",
                "one of " + ", ".join(repr(n) for n in known) + " (see `tcplab list stacks`)",
            )
        try:
            stacks_mod.get(v, catalog)
        except stacks_mod.StackError as e:
            raise Invalid(f"the personality does not load: {e}", "a valid stack file") from None
        return v

    return conv


def validate_cca(
    ctx: Ctx, value: Any, path: str, catalog: Catalog, default: str = DEFAULT_CCA
) -> dict[str, Any]:
    cca_names = list(catalog.ccas)
    allowed = "one of " + ", ".join(repr(n) for n in cca_names)
    if isinstance(value, str):
        name, params_raw, name_path = value, {}, path
    elif isinstance(value, dict):
        name = value.get("name", default)
        params_raw = {k: v for k, v in value.items() if k != "name"}
        name_path = join(path, "name")
    else:
        raise ctx.error(
            path,
            f"is a {tname(value)}",
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
            join(path, key),
            f"unknown parameter: {name} has no parameters",
            params_raw[key],
            f"cca = '{name}'",
        )
    t = Table(ctx, params_raw, path, pnames, f"parameters of {name}")
    params: dict[str, Any] = {}
    for pname in pnames:
        if pname in t.data:
            params[pname] = t.take(pname, cca.params[pname].convert)
    return {"name": name, "params": params}


def with_stack_params(
    ctx: Ctx, cca: dict[str, Any], st: stacks_mod.Stack, fld: str, catalog: Catalog
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


@dataclass(frozen=True)
class TcpSetup:
    """What one TCP flow's end hosts run: their stacks, their knobs and the sender's CCA."""

    sender_stack: str
    receiver_stack: str
    knobs: dict[str, Any]
    receiver_knobs: dict[str, Any]
    cca: dict[str, Any]


def resolve_tcp(
    ctx: Ctx, t: Table, catalog: Catalog, tcp_defaults: Mapping[str, Any], stack: str
) -> TcpSetup:
    """The stacks, knobs and CCA of the TCP flow table *t* (*tcp_defaults*: the scenario's
    ``[tcp]``; *stack*: its ``stack``)."""
    # Each end host runs its stack's personality (python/tcplab/stacks/<name>.toml).
    sender_stack = t.take("sender_stack", stack_name(catalog), default=stack)
    receiver_stack = t.take("receiver_stack", stack_name(catalog), default=stack)
    sender = stacks_mod.get(sender_stack, catalog)
    receiver = stacks_mod.get(receiver_stack, catalog)
    common, window_set = _flow_knobs(ctx, t, catalog, tcp_defaults)
    ordered = _knob_order(catalog)
    knobs = ordered(rules.host_knobs(sender, common, window_set=window_set))
    receiver_knobs = ordered(rules.host_knobs(receiver, common, window_set=window_set))
    if t.has("receiver_tcp"):
        # The receiving host only: over its personality and the flow's knobs.
        overrides = validate_knobs(ctx, t.raw("receiver_tcp"), t.field("receiver_tcp"), catalog)
        t.resolved["receiver_tcp"] = copy.deepcopy(t.raw("receiver_tcp"))
        receiver_knobs = ordered(
            rules.configured_window({**receiver_knobs, **overrides}, overrides)
        )
    cca = _flow_cca(ctx, t, catalog, sender)
    return TcpSetup(sender_stack, receiver_stack, knobs, receiver_knobs, cca)


def _flow_knobs(
    ctx: Ctx, t: Table, catalog: Catalog, tcp_defaults: Mapping[str, Any]
) -> tuple[dict[str, Any], bool]:
    """The scenario's knobs for this flow — ``[tcp]``, then ``window``, then ``[flow.tcp]`` —
    which apply to both end hosts over each host's personality, and whether ``window`` is set."""
    common = dict(tcp_defaults)
    flow_tcp: dict[str, Any] = {}
    if t.has("tcp"):
        flow_tcp = validate_knobs(ctx, t.raw("tcp"), t.field("tcp"), catalog)
        t.resolved["tcp"] = copy.deepcopy(t.raw("tcp"))
    window_set = t.has("window")
    if window_set:
        window = t.take("window", as_pos_bytes)
        for knob in ("sndbuf", "rcvbuf"):
            if knob not in catalog.knobs:
                raise t.error("window", f"the engine has no '{knob}' knob to set")
            if knob in flow_tcp:
                raise ctx.error(
                    join(t.field("tcp"), knob),
                    "conflicts with window (window sets both sndbuf and rcvbuf)",
                    t.raw("tcp")[knob],
                    "either window or tcp.sndbuf/tcp.rcvbuf",
                )
            common[knob] = window
    common.update(flow_tcp)
    return common, window_set


def _knob_order(catalog: Catalog) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Sorts a knob dict into the engine's knob order (unknown names last)."""
    order = {n: j for j, n in enumerate(catalog.knobs)}

    def ordered(d: dict[str, Any]) -> dict[str, Any]:
        return {k: d[k] for k in sorted(d, key=lambda k: order.get(k, len(order)))}

    return ordered


def _flow_cca(ctx: Ctx, t: Table, catalog: Catalog, sender: stacks_mod.Stack) -> dict[str, Any]:
    """The flow's ``cca`` (default: the sender stack's algorithm) with the sender stack's
    parameters for it under the flow's own."""
    sender_field = t.field("sender_stack") if t.has("sender_stack") else "stack"
    if t.has("cca"):
        # A table without a name means the sender stack's default algorithm.
        cca = validate_cca(ctx, t.raw("cca"), t.field("cca"), catalog, default=sender.cca)
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
        cca = validate_cca(ctx, sender.cca, t.field("cca"), catalog)
    return with_stack_params(ctx, cca, sender, sender_field, catalog)
