"""Engine dispatch (docs/design.md §1): a normalized config (§3) in, a raw result (§4) out.

* ``"sim"``: :func:`tcplab._core.run` — the Rust discrete-event simulator. It takes the config as
  JSON text, releases the GIL, and raises ValueError on a bad config.
* ``"kernel"``: :func:`tcplab.kernel.run` — real Linux TCP in network namespaces; it takes the
  config as a dict. Imported lazily: it needs privileges and tools the simulator does not.

:func:`catalog` gives the knobs and CCAs a scenario for each engine may use; the scenario
validator takes it from here, so validating never imports the kernel package.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .catalog import Catalog, Cca, default_catalog
from .errors import EngineUnavailable, UserError

__all__ = [
    "Engine",
    "catalog",
    "check_rerun_invalid",
    "get_engine",
    "kernel_ccas",
    "parallel_ok",
    "set_rerun_invalid",
    "with_kernel_ccas",
]

#: The CCAs the running Linux kernel offers (proc(5), tcp(7): tcp_available_congestion_control).
KERNEL_CCAS_FILE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")

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


def kernel_ccas() -> list[str]:
    """The congestion controls the running kernel offers (``reno cubic bbr`` here); empty where
    that cannot be read (not Linux, /proc not mounted)."""
    try:
        return KERNEL_CCAS_FILE.read_text().split()
    except OSError:
        return []


def with_kernel_ccas(base: Catalog, names: Iterable[str]) -> Catalog:
    """*base* plus the kernel's CCAs *names* that it lacks (without parameters)."""
    ccas = dict(base.ccas)
    for name in names:
        ccas.setdefault(
            name,
            Cca(
                name=name,
                summary="offered by the running Linux kernel (kernel engine only)",
                source=str(KERNEL_CCAS_FILE),
            ),
        )
    return Catalog(knobs=dict(base.knobs), ccas=ccas)


def catalog(name: str) -> Catalog:
    """The TCP knobs and CCAs a scenario for engine *name* may use: the simulator's
    (``tcplab._core``); for ``"kernel"`` also every CCA the running kernel offers (e.g. ``bbr``
    where the simulator lacks one), whose parameters the kernel engine checks when it runs."""
    base = default_catalog()
    if name == "kernel":
        return with_kernel_ccas(base, kernel_ccas())
    return base


def check_rerun_invalid(n: int, engine: str) -> None:
    """Refuse ``--rerun-invalid N`` where it cannot act (before anything runs)."""
    if engine != "kernel":
        raise UserError(
            f"--rerun-invalid {n}: only the kernel engine marks a trial invalid (its link "
            f"emulator's self-check); this run uses the {engine!r} engine: drop the option or "
            "run with --engine kernel"
        )
    if n < 0:
        raise UserError(f"--rerun-invalid {n}: give a count ≥ 0 (0 keeps every first attempt)")


def set_rerun_invalid(configs: Iterable[dict[str, Any]], n: int) -> None:
    """How often the kernel engine runs an invalid trial of each config again
    (``meta.kernel.rerun_invalid``, read by :func:`tcplab.kernel.engine.rerun_invalid`)."""
    for cfg in configs:
        cfg.setdefault("meta", {}).setdefault("kernel", {})["rerun_invalid"] = n
