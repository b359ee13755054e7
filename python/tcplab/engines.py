"""Engine dispatch (docs/design.md §1): a normalized config (§3) in, a raw result (§4) out.

* ``"sim"``: :func:`tcplab._core.run` — the Rust discrete-event simulator. It takes the config as
  JSON text, releases the GIL, and raises ValueError on a bad config.
* ``"kernel"``: :func:`tcplab.kernel.run` — real Linux TCP in network namespaces; it takes the
  config as a dict. Imported lazily: it needs privileges and tools the simulator does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .errors import EngineUnavailable

__all__ = ["Engine", "get_engine", "parallel_ok"]

Engine = Callable[[dict[str, Any]], dict[str, Any]]


def _sim() -> Engine:
    from .catalog import load_core

    core = load_core()

    def run(config: dict[str, Any]) -> dict[str, Any]:
        return core.run(json.dumps(config, allow_nan=False))

    return run


def _kernel() -> Engine:
    try:
        from . import kernel  # type: ignore[attr-defined]
    except ImportError as exc:
        raise EngineUnavailable(
            f"the kernel engine (tcplab.kernel) cannot be loaded: {exc}"
        ) from exc
    run = getattr(kernel, "run", None)
    if run is None:
        raise EngineUnavailable("the kernel engine (tcplab.kernel) has no run(config) function")
    return run  # type: ignore[no-any-return]


def get_engine(name: str) -> Engine:
    """The run function of engine *name* ("sim"/"kernel"); EngineUnavailable if it cannot load."""
    if name == "sim":
        return _sim()
    if name == "kernel":
        return _kernel()
    raise EngineUnavailable(f"unknown engine {name!r} (known: 'sim', 'kernel')")


def parallel_ok(name: str) -> bool:
    """Whether trials of engine *name* may run in parallel threads.

    The simulator releases the GIL and shares nothing between runs. Kernel trials run in real time
    on the host's CPUs, so parallel trials would perturb each other's timing: they run one by one.
    """
    return name == "sim"
