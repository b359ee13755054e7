"""Running the trials of a scenario (the ``tcplab.run`` API).

Trial ``k`` runs the normalized config of the scenario with seed ``trial_seed(S, k)``
(:mod:`tcplab.seeds`). Simulator trials run in parallel threads (``tcplab._core.run`` releases the
GIL); results are put back in trial order, and each trial depends only on its config, so a parallel
run gives exactly what a sequential one gives. Everything is validated before any trial starts and
before anything is written.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from . import engines, executors, results
from . import scenario as scenario_mod
from .capture import capture_specs
from .catalog import Catalog
from .errors import UserError
from .results import Result
from .seeds import trial_seeds
from .store import TrialStore

__all__ = ["ProgressBar", "run"]

Progress = Callable[[int, int], None]


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn with ``\\r``; no dependencies."""

    def __init__(self, total: int, label: str = "trials", stream: TextIO | None = None) -> None:
        self.total = total
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self._lock = threading.Lock()
        self(0, total)

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            width = 30
            filled = width * done // total if total else width
            elapsed = time.perf_counter() - self.start
            bar = "#" * filled + "-" * (width - filled)
            rate = done / elapsed if elapsed > 0 else 0.0
            if done >= total:
                tail = f"{elapsed:6.1f}s"
            elif rate > 0:
                tail = f"{rate:5.1f}/s ETA {(total - done) / rate:5.0f}s"
            else:
                tail = "ETA   ?"
            self.stream.write(f"\r[{bar}] {done}/{total} {self.label} {tail}   ")
            if done >= total:
                self.stream.write("\n")
            self.stream.flush()


def run(
    scenario_or_path: str | os.PathLike[str] | Mapping[str, Any] | scenario_mod.Scenario,
    *,
    trials: int | None = None,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    out: str | os.PathLike[str] | None = None,
    engine: str | None = None,
    progress: bool | Progress = False,
    jobs: int | None = None,
    catalog: Catalog | None = None,
    pcap: Iterable[str] | None = None,
    executor: str | executors.Executor | None = None,
    ray_address: str | None = None,
    resume: bool | TrialStore = False,
    ktrace: Iterable[str] | None = None,
    rerun_invalid: int | None = None,
) -> Result:
    """Run a scenario and return its :class:`~tcplab.results.Result`.

    *scenario_or_path*: a TOML file, a parsed document (dict) or a loaded Scenario. *trials*,
    *seed*, *engine* replace the scenario's values; *overrides* are ``FIELD=VALUE`` strings as for
    ``--set``. With *out*, the run directory is written atomically (it must not exist or be empty);
    without, nothing is written. *progress*: True for a bar on stderr, or a callable
    ``(done, total)``. *jobs*: threads for simulator trials (default ``os.cpu_count()``).
    *pcap*: links or ``host:NAME``s whose packets trial 0 records (default: the scenario's
    ``capture``); the files are in ``result.captures`` and, with *out*, in ``<out>/pcap/``.
    *executor*: ``"local"`` (default), ``"ray"`` or an :class:`~tcplab.executors.Executor`
    (*ray_address* joins a Ray cluster). *resume*: True (or a
    :class:`~tcplab.store.TrialStore`) reuses trials stored by earlier runs and stores new ones.
    *ktrace*: kernel engine only, the Linux tracepoints every trial records
    (:data:`tcplab.kernel.ktrace.EVENTS`); they are in ``result.ktrace`` and, with *out*, in
    ``<out>/ktrace.parquet``. *rerun_invalid*: kernel engine only, how many times a trial
    the link emulator marks invalid is run again (default
    :data:`tcplab.kernel.engine.DEFAULT_RERUN_INVALID`; 0 keeps the first attempt).
    """
    from . import __version__

    overrides = list(overrides)
    if (
        isinstance(scenario_or_path, scenario_mod.Scenario)
        and not overrides
        and trials is None
        and seed is None
        and engine is None
    ):
        sc = scenario_or_path
    else:
        sc = scenario_mod.load(
            scenario_or_path,
            overrides=overrides,
            trials=trials,
            seed=seed,
            engine=engine,
            catalog=catalog,
        )
    if ktrace:
        _check_tracepoints(list(ktrace), sc.engine)
    if rerun_invalid is not None:
        engines.check_rerun_invalid(rerun_invalid, sc.engine)
    if out is not None:
        results.check_out(out)
    engines.get_engine(sc.engine)  # EngineUnavailable before anything is written
    seeds = trial_seeds(sc.seed, sc.trials)
    configs = [sc.config(s) for s in seeds]
    if ktrace:
        for cfg in configs:
            cfg.setdefault("meta", {}).setdefault("kernel", {})["tracepoints"] = list(ktrace)
    if rerun_invalid is not None:
        engines.set_rerun_invalid(configs, rerun_invalid)
    pcap_names = list(pcap) if pcap is not None else list(sc.capture)
    capture_dir: Path | None = None
    if pcap_names:
        capture_dir = Path(tempfile.mkdtemp(prefix="tcplab-pcap-"))
        configs[0]["capture"] = capture_specs(configs[0], pcap_names, capture_dir)
    if not isinstance(executor, str | None):
        ex = executor
    else:
        ex = executors.get_executor(
            executor, jobs=jobs, ray_address=ray_address, scenario_run=sc.run_options
        )
    store = TrialStore() if resume is True else (resume or None)
    callback: Progress | None
    if progress is True:
        callback = ProgressBar(len(configs))
    elif callable(progress):
        callback = progress
    else:
        callback = None
    t0 = time.perf_counter()
    raws, seconds = executors.run_trials(
        sc.engine, configs, executor=ex, progress=callback, store=store
    )
    wall = time.perf_counter() - t0
    result = Result(sc, seeds, configs, raws, wall, __version__)
    result.trial_seconds = seconds  # type: ignore[attr-defined]
    if capture_dir is not None:
        result.captures = [Path(c["path"]) for c in configs[0]["capture"]]
    if out is not None:
        result.write(out)
    return result


def _check_tracepoints(events: list[str], engine: str) -> None:
    """*events* are tracepoints the kernel engine can record (kernel/ktrace.py)."""
    from .kernel.ktrace import EVENTS

    if engine != "kernel":
        raise UserError(
            f"--ktrace {','.join(events)}: tracepoints are the real kernel's; run with "
            "--engine kernel"
        )
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        raise UserError(
            f"--ktrace: unknown event(s) {', '.join(unknown)}; choose from {', '.join(EVENTS)}"
        )
