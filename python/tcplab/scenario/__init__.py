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

The package, one module per concern:

* :mod:`.model` — :class:`Scenario`, :class:`PathModel`, :class:`Host`, :class:`Flow` and their
  renderings (the trial config, the resolved TOML, the topology text).
* :mod:`.defaults` — keys, defaults and limits of the format.
* :mod:`.fields` — reading a table field by field with errors that name the field.
* :mod:`.loss` — loss models. :mod:`.overrides` — the ``--set FIELD=VALUE`` language.
* :mod:`.loader` — reading files (also for tcplab.sweep) and :func:`load`.
* :mod:`.validate` — the whole document; :mod:`.topology` — path, hosts, where each flow's hosts
  are and its access delays, nodes and links; :mod:`.flows` — ``[[flow]]`` in named steps;
  :mod:`.personality` — knobs, stacks and CCA of TCP flows (rules in tcplab.stacks.rules).
"""

from __future__ import annotations

from .defaults import DEFAULT_STACK, ROUTERS
from .loader import load, read_document
from .model import Flow, Host, PathModel, Scenario
from .overrides import apply_overrides, parse_override_value

__all__ = [
    "DEFAULT_STACK",
    "ROUTERS",
    "Flow",
    "Host",
    "PathModel",
    "Scenario",
    "apply_overrides",
    "load",
    "parse_override_value",
    "read_document",
]
