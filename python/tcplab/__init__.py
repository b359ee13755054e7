"""tcplab: a laboratory for measuring and comparing TCP stacks and congestion-control algorithms.

Quick use::

    import tcplab
    result = tcplab.run("scenarios/quickstart.toml", trials=3, out="runs/quick")
    result.summary["aggregate"]["goodput_bps"]["mean"]
    result.timeseries  # pandas DataFrame: trial, flow, group, time_s, goodput_bps, cwnd_bytes, ...

See docs/scenario-format.md for scenario files and the outputs, docs/design.md for the contracts.
"""

from __future__ import annotations

from importlib import metadata as _metadata

from .errors import (
    EngineError,
    EngineUnavailable,
    OutputError,
    ScenarioError,
    TcplabError,
    UserError,
)
from .results import Result
from .runner import run
from .scenario import Scenario, load
from .seeds import trial_seed
from .units import UnitError

try:
    __version__ = _metadata.version("tcplab")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "EngineError",
    "EngineUnavailable",
    "OutputError",
    "Result",
    "Scenario",
    "ScenarioError",
    "TcplabError",
    "UnitError",
    "UserError",
    "__version__",
    "load",
    "run",
    "trial_seed",
]
