"""The kernel engine: tcplab scenarios on real Linux TCP in network namespaces.

* :func:`run` — one trial of a normalized config (docs/design.md §3) → raw result (§4) with
  ``"engine": "kernel"``, plus ``valid`` / ``invalid_reasons`` (the link emulator's self-check)
  and a ``kernel`` section (per-flow start offsets, knobs applied, emulator accuracy).
* :func:`cleanup` — remove namespaces and processes left by crashed runs.
* :func:`add_subcommands` — registers ``tcplab compare`` and ``tcplab kernel-cleanup``.

Needs root, iproute2, iperf3, ethtool and the link emulator (``tcplab._core.linkem_serve``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_subcommands", "available_ccas", "cleanup", "kernel_catalog", "run"]


def run(config: dict[str, Any]) -> dict[str, Any]:
    """Run one trial of *config* on the running Linux kernel; returns the raw result (§4).

    Raises :class:`tcplab.errors.EngineUnavailable` (not root, tools missing: nothing created) or
    :class:`tcplab.errors.EngineError` (a scenario the kernel cannot run, e.g. a CCA the kernel
    lacks, a non-Linux personality, a knob it cannot honour; or a setup failure). Everything the
    run created is removed before it returns or raises, also on Ctrl-C.
    """
    from .engine import run as _run

    return _run(config)


def cleanup(*, force: bool = False) -> list[str]:
    """Delete namespaces (and the processes in them) left by kernel runs whose process is gone;
    with *force* also those of runs in progress. Returns the names deleted."""
    from .ktrace import cleanup_instances
    from .netns import _RUN_ID_RE, cleanup_leftovers, list_namespaces

    removed = cleanup_leftovers(force=force)
    # The tracefs instances of --ktrace runs (kernel/ktrace.py) whose namespaces are gone.
    alive = {m.group(1) for n in list_namespaces() if (m := _RUN_ID_RE.match(n))}
    return removed + cleanup_instances(alive)


def available_ccas() -> list[str]:
    """Congestion controls the running kernel offers."""
    from .linux import available_ccas as _a

    return _a()


def kernel_catalog() -> Any:
    """The catalog to validate scenarios for the kernel engine with: the simulator's knobs and
    CCAs plus every CCA the running kernel offers (e.g. ``bbr``)."""
    from .linux import kernel_catalog as _k

    return _k()


def add_subcommands(subparsers: Any) -> None:
    """Register ``compare`` and ``kernel-cleanup`` on an argparse subparsers object.

    Each parser sets ``func``: the CLI calls ``args.func(args)`` and uses its int return value as
    the exit status (errors are raised as tcplab.errors exceptions, as the other commands do).
    """
    from .cli import add_subcommands as _add

    _add(subparsers)
