"""Time-varying paths: ``[[path.schedule]]`` (docs/scenario-format.md, "Time-varying paths").

Each step changes, from its time ``at`` on, some of: the bottleneck rate r1 → r2 (``rate``) and
r2 → r1 (``reverse_rate``), its one-way delay in both directions (``delay``, or ``rtt`` for the
path's base RTT), and the loss model r1 → r2 (``loss``) and r2 → r1 (``reverse_loss``). What it does
not name stays as it was. The engines apply a change to every packet offered to the link at or
after ``at``; packets already queued keep the departure computed when they were queued (netem's
rule; crates/tcplab-sim/src/link.rs gives the sources).

This module validates the table and renders each direction's steps for the engine config
(docs/design.md §3 ``links[].ab.schedule``); both engines take them as they are (the kernel
engine through its link emulator, crates/tcplab-linkem).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .. import units
from .fields import Ctx, Table, as_duration, as_pos_duration, as_rate
from .loss import parse_loss, show_loss
from .model import PathModel

SCHEDULE_KEYS = ("at", "rate", "reverse_rate", "delay", "rtt", "loss", "reverse_loss")
CHANGE_KEYS = SCHEDULE_KEYS[1:]
SCHEDULE_ALLOWED = (
    "an array of tables [[path.schedule]], each with at = '<time>' and at least one of "
    + ", ".join(CHANGE_KEYS)
)


@dataclass(frozen=True)
class Step:
    """One validated change; None = unchanged."""

    at_ns: int
    rate_bps: int | None = None
    reverse_rate_bps: int | None = None
    delay_ns: int | None = None
    loss: dict[str, Any] | None = None
    reverse_loss: dict[str, Any] | None = None

    def direction(self, d: str) -> dict[str, Any] | None:
        """The engine config step of direction *d* ("ab" = r1 → r2, "ba"), None if it changes
        nothing there."""
        rate = self.rate_bps if d == "ab" else self.reverse_rate_bps
        loss = self.loss if d == "ab" else self.reverse_loss
        out: dict[str, Any] = {"at_ns": self.at_ns}
        if rate is not None:
            out["rate_bps"] = rate
        if self.delay_ns is not None:
            out["delay_ns"] = self.delay_ns
        if loss is not None:
            out["loss"] = dict(loss)
        return out if len(out) > 1 else None


def parse_schedule(
    ctx: Ctx, data: Any, path: PathModel, duration_ns: int
) -> tuple[tuple[Step, ...], list[dict[str, Any]]]:
    """Validate ``path.schedule`` (*data*, the raw array) against the validated *path* and the
    run's duration; returns the steps and their resolved tables (for the resolved scenario)."""
    if not isinstance(data, list):
        raise ctx.error("path.schedule", "must be an array of tables", data, SCHEDULE_ALLOWED)
    steps: list[Step] = []
    resolved: list[dict[str, Any]] = []
    prev_at: int | None = None
    for i, raw in enumerate(data):
        where = f"path.schedule.{i}"
        t = Table(ctx, raw, where, SCHEDULE_KEYS, "a [[path.schedule]] step")
        at = t.take(
            "at", as_pos_duration, required=True, allowed="a time after the start, e.g. '10s'"
        )
        if at >= duration_ns:
            raise t.error(
                "at",
                f"is not before the end of the run (duration = "
                f"{units.format_duration(duration_ns)}); the change would never apply",
                f"a time below {units.format_duration(duration_ns)}, or a longer duration",
            )
        if prev_at is not None and at <= prev_at:
            raise t.error(
                "at",
                f"is not after the previous step's time "
                f"(path.schedule.{i - 1}.at = {units.format_duration(prev_at)})",
                "steps in increasing time order, at most one step per time",
            )
        prev_at = at
        if not any(t.has(k) for k in CHANGE_KEYS):
            raise ctx.error(
                where,
                "changes nothing",
                raw,
                "at least one of " + ", ".join(CHANGE_KEYS),
            )
        if t.has("delay") and t.has("rtt"):
            raise t.error("rtt", "cannot be given together with delay in one step", "one of them")
        rate = t.take("rate", as_rate, default=None)
        rev_rate = t.take("reverse_rate", as_rate, default=None)
        delay = None
        if t.has("delay"):
            delay = t.take("delay", as_duration)
        elif t.has("rtt"):
            rtt = t.take("rtt", as_pos_duration)
            # The same split as path.rtt: the access links keep their delays, the bottleneck's
            # one-way delay moves by half the RTT change (odd nanoseconds rounded down).
            delay = path.delay_ns + rtt // 2 - path.rtt_ns // 2
            if delay < 0:
                minimum = 2 * (path.rtt_ns // 2 - path.delay_ns)
                raise t.error(
                    "rtt",
                    f"is smaller than the access links' share of the path RTT "
                    f"({units.format_duration(path.rtt_ns)} with a bottleneck delay of "
                    f"{units.format_duration(path.delay_ns)}): the bottleneck delay would be "
                    "negative",
                    f"at least {units.format_duration(minimum)}",
                )
        loss = rev_loss = None
        if t.has("loss"):
            loss = parse_loss(ctx, t.field("loss"), t.raw("loss"))
            t.resolved["loss"] = t.raw("loss")
        if t.has("reverse_loss"):
            rev_loss = parse_loss(ctx, t.field("reverse_loss"), t.raw("reverse_loss"))
            t.resolved["reverse_loss"] = t.raw("reverse_loss")
        steps.append(Step(at, rate, rev_rate, delay, loss, rev_loss))
        resolved.append(t.ordered_resolved())
    return tuple(steps), resolved


def with_schedule(
    ctx: Ctx, data: Any, path: PathModel, resolved: dict[str, Any], duration_ns: int
) -> tuple[PathModel, dict[str, Any]]:
    """*path* and its resolved table with the validated ``path.schedule`` *data* added."""
    steps, steps_resolved = parse_schedule(ctx, data, path, duration_ns)
    return dataclasses.replace(path, schedule=steps), {**resolved, "schedule": steps_resolved}


def delay_range(path: PathModel) -> tuple[int, int]:
    """Smallest and largest bottleneck one-way delay over the run."""
    delays = [path.delay_ns, *(s.delay_ns for s in path.schedule if s.delay_ns is not None)]
    return min(delays), max(delays)


def show_schedule(path: PathModel) -> list[str]:
    """The steps in words, for the topology text of ``tcplab validate``."""
    lines = []
    for s in path.schedule:
        parts = []
        if s.rate_bps is not None:
            parts.append(f"rate r1->r2 {units.human_rate(s.rate_bps)}")
        if s.reverse_rate_bps is not None:
            parts.append(f"rate r2->r1 {units.human_rate(s.reverse_rate_bps)}")
        if s.delay_ns is not None:
            parts.append(f"delay {units.human_duration(s.delay_ns)}")
        if s.loss is not None:
            parts.append(f"loss r1->r2 {show_loss(s.loss)}")
        if s.reverse_loss is not None:
            parts.append(f"loss r2->r1 {show_loss(s.reverse_loss)}")
        lines.append(f"    at {units.human_duration(s.at_ns)}: " + ", ".join(parts))
    return lines
