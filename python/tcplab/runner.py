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
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from . import engines, results
from . import scenario as scenario_mod
from .capture import capture_specs
from .catalog import Catalog
from .errors import EngineError
from .results import Result
from .seeds import trial_seeds

__all__ = ["ProgressBar", "run", "run_trials"]

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
            self.stream.write(f"\r[{bar}] {done}/{total} {self.label} {elapsed:6.1f}s")
            if done >= total:
                self.stream.write("\n")
            self.stream.flush()


def run_trials(
    engine: engines.Engine,
    configs: Sequence[dict[str, Any]],
    *,
    jobs: int = 1,
    progress: Progress | None = None,
    engine_name: str = "sim",
) -> list[dict[str, Any]]:
    """Run every config with *engine* (*jobs* threads) and return the raw results in order."""
    n = len(configs)
    out: list[dict[str, Any] | None] = [None] * n
    done = 0
    lock = threading.Lock()

    def one(k: int) -> None:
        nonlocal done
        try:
            raw = engine(configs[k])
        except ValueError as e:
            raise EngineError(
                f"trial {k} (seed {configs[k]['seed']}): the {engine_name} engine rejected the "
                f"config: {e}"
            ) from e
        out[k] = raw
        with lock:
            done += 1
            if progress is not None:
                progress(done, n)

    if jobs <= 1 or n <= 1:
        for k in range(n):
            one(k)
    else:
        with ThreadPoolExecutor(max_workers=min(jobs, n), thread_name_prefix="tcplab") as pool:
            futures = [pool.submit(one, k) for k in range(n)]
            # Re-raise the error of the lowest trial index, as a sequential run would.
            for fut in futures:
                fut.result()
    return [r for r in out if r is not None]


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
) -> Result:
    """Run a scenario and return its :class:`~tcplab.results.Result`.

    *scenario_or_path*: a TOML file, a parsed document (dict) or a loaded Scenario. *trials*,
    *seed*, *engine* replace the scenario's values; *overrides* are ``FIELD=VALUE`` strings as for
    ``--set``. With *out*, the run directory is written atomically (it must not exist or be empty);
    without, nothing is written. *progress*: True for a bar on stderr, or a callable
    ``(done, total)``. *jobs*: threads for simulator trials (default ``os.cpu_count()``).
    *pcap*: links or ``host:NAME``s whose packets trial 0 records (default: the scenario's
    ``capture``); the files are in ``result.captures`` and, with *out*, in ``<out>/pcap/``.
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
    if out is not None:
        results.check_out(out)
    run_engine = engines.get_engine(sc.engine)
    seeds = trial_seeds(sc.seed, sc.trials)
    configs = [sc.config(s) for s in seeds]
    pcap_names = list(pcap) if pcap is not None else list(sc.capture)
    capture_dir: Path | None = None
    if pcap_names:
        capture_dir = Path(tempfile.mkdtemp(prefix="tcplab-pcap-"))
        configs[0]["capture"] = capture_specs(configs[0], pcap_names, capture_dir)
    if jobs is None:
        jobs = os.cpu_count() or 1
    if not engines.parallel_ok(sc.engine):
        jobs = 1
    callback: Progress | None
    if progress is True:
        callback = ProgressBar(len(configs))
    elif callable(progress):
        callback = progress
    else:
        callback = None
    t0 = time.perf_counter()
    raws = run_trials(run_engine, configs, jobs=jobs, progress=callback, engine_name=sc.engine)
    wall = time.perf_counter() - t0
    result = Result(sc, seeds, configs, raws, wall, __version__)
    if capture_dir is not None:
        result.captures = [Path(c["path"]) for c in configs[0]["capture"]]
    if out is not None:
        result.write(out)
    return result
