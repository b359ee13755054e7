"""Where trials run: the local thread pool (default) or a Ray cluster (``tcplab[ray]`` extra).

An executor takes normalized configs (docs/design.md §3) and gives back each trial's raw result
(§4) and the engine seconds it took. A trial depends only on its config, so the executor does not
change results: :func:`run_trials` puts them back in trial order and a run on Ray writes the same
bytes as a local run for the same seeds (tests/test_campaign.py checks it).

* ``local``: simulator trials in threads of this process (``tcplab._core.run`` releases the GIL),
  in the order given (callers put the longest first). Kernel trials always run here, one by one:
  they need root and this machine's network namespaces.
* ``ray``: one Ray task per *chunk* of trials; a chunk is a run of consecutive trials (longest
  first) whose estimated cost is about 1/8 of one worker's share, so per-task overhead stays small
  on short trials while long trials still spread over the workers. A worker that dies has its
  chunk retried by Ray (``max_retries``); a trial the engine rejects fails the run at once with its
  index, seed and the error. Ctrl-C cancels the tasks in flight. Every worker must run the same
  tcplab build as the driver (same wheel): each task checks this and fails with a clear message
  otherwise. With no address, a local Ray instance with *jobs* CPUs is started (and stopped at
  exit); ``--ray-address`` joins a cluster started with ``ray start --head``.

Which executor: the ``--executor`` flag, else the scenario's ``[run] executor``, else the
``TCPLAB_EXECUTOR`` environment variable, else ``local``. The Ray address likewise:
``--ray-address``, ``[run] ray_address``, ``TCPLAB_RAY_ADDRESS``.

With a :class:`~tcplab.store.TrialStore` (``--resume``), trials already in the store are not run
again and each finished trial is stored as soon as it arrives, so an interrupted campaign loses only
the trials in flight.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from . import engines
from .errors import EngineError, UserError

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "get_executor",
    "run_trials",
    "trial_cost",
]

EXECUTORS = ("local", "ray")

#: ``on_done(index, raw, engine_seconds)``, called once per finished trial (from any thread).
OnDone = Callable[[int, dict[str, Any], float], None]
Progress = Callable[[int, int], None]


class Executor(Protocol):
    name: str

    def execute(
        self,
        engine_name: str,
        configs: Sequence[dict[str, Any]],
        order: Sequence[int],
        on_done: OnDone,
    ) -> None:
        """Run ``configs[k]`` for every ``k`` in *order* (started in that order)."""


def _describe(labels: Sequence[str] | None, k: int, cfg: dict[str, Any]) -> str:
    what = labels[k] if labels is not None else f"trial {k}"
    return f"{what} (seed {cfg['seed']})"


def trial_cost(cfg: dict[str, Any]) -> float:
    """A rough cost (packets) of one trial: duration × the fastest monitored link's rate / MTU."""
    rates = [
        link[d]["rate_bps"]
        for link in cfg.get("links", [])
        for d in ("ab", "ba")
        if link.get("monitor") and link.get(d, {}).get("rate_bps")
    ] or [link["ab"].get("rate_bps") or 0 for link in cfg.get("links", []) if "ab" in link]
    rate = max(rates, default=0)
    return rate * cfg.get("duration_ns", 0) / 1e9 / (8 * 1500) + len(cfg.get("flows", ()))


class LocalExecutor:
    """Trials in *jobs* threads of this process (kernel trials: one at a time)."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or os.cpu_count() or 1

    def execute(
        self,
        engine_name: str,
        configs: Sequence[dict[str, Any]],
        order: Sequence[int],
        on_done: OnDone,
    ) -> None:
        run = engines.get_engine(engine_name)
        jobs = self.jobs if engines.parallel_ok(engine_name) else 1

        def one(k: int) -> None:
            t = time.perf_counter()
            try:
                raw = run(configs[k])
            except ValueError as e:
                raise _Rejected(k, str(e)) from e
            on_done(k, raw, time.perf_counter() - t)

        if jobs <= 1 or len(order) <= 1:
            for k in order:
                one(k)
            return
        with ThreadPoolExecutor(
            max_workers=min(jobs, len(order)), thread_name_prefix="tcplab"
        ) as pool:
            futures = [pool.submit(one, k) for k in order]
            try:
                # Re-raise the error of the first trial in order, as a sequential run would.
                for fut in futures:
                    fut.result()
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise


class _Rejected(Exception):
    """The engine rejected trial *index*'s config (ValueError from the engine)."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


# Ray ------------------------------------------------------------------------------------------

_RAY_STARTED = False


def _ray_chunk(engine_name: str, build: str, configs: list[dict[str, Any]]) -> list[tuple]:
    """A Ray task: run *configs* one after another on a worker; ``("ok", raw, seconds)`` or
    ``("error", message, 0.0)`` per trial (an engine's ValueError is not worth a retry)."""
    from .store import build_id

    mine = build_id(engine_name)
    if mine != build:
        raise RuntimeError(
            f"this Ray worker runs tcplab build {mine}, the driver {build}: install the same "
            "tcplab wheel on every node (README, 'Campaigns on Ray')"
        )
    _maybe_die()
    run = engines.get_engine(engine_name)
    out: list[tuple] = []
    for cfg in configs:
        t = time.perf_counter()
        try:
            raw = run(cfg)
        except ValueError as e:
            out.append(("error", str(e), 0.0))
            continue
        out.append(("ok", raw, time.perf_counter() - t))
    return out


#: Fault injection for tests (tests/test_campaign.py): the first chunk that creates this file
#: kills its own worker with SIGKILL, as an OOM kill or a lost node would.
KILL_ONCE_ENV = "TCPLAB_TEST_KILL_ONE_RAY_WORKER"


def _maybe_die() -> None:
    marker = os.environ.get(KILL_ONCE_ENV)
    if not marker:
        return
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError(
            "the Ray executor needs Ray: pip install 'tcplab[ray]' (or pip install 'ray[default]')"
        ) from None
    return ray


class RayExecutor:
    """One Ray task per chunk of trials (see the module docstring)."""

    name = "ray"
    #: Ray retries a task whose worker died this many times before the run fails.
    max_retries = 3
    #: Chunks per worker the trials are cut into (by estimated cost).
    chunks_per_worker = 8

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        self.address = address
        self.jobs = jobs

    def _init(self) -> tuple[Any, int]:
        global _RAY_STARTED
        ray = _import_ray()
        if not ray.is_initialized():
            kw: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if self.address:
                ray.init(address=self.address, **kw)
            else:
                ray.init(num_cpus=self.jobs or os.cpu_count() or 1, **kw)
                if not _RAY_STARTED:
                    atexit.register(ray.shutdown)
                _RAY_STARTED = True
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        workers = min(self.jobs, cpus) if self.jobs else cpus
        return ray, max(1, workers)

    def chunks(
        self, configs: Sequence[dict[str, Any]], order: Sequence[int], workers: int
    ) -> list[list[int]]:
        """Consecutive runs of *order* of about total cost / (workers × chunks_per_worker)."""
        costs = [trial_cost(configs[k]) for k in order]
        target = sum(costs) / (workers * self.chunks_per_worker) if costs else 0.0
        out: list[list[int]] = []
        cur: list[int] = []
        acc = 0.0
        for k, c in zip(order, costs, strict=True):
            cur.append(k)
            acc += c
            if acc >= target:
                out.append(cur)
                cur, acc = [], 0.0
        if cur:
            out.append(cur)
        return out

    def execute(
        self,
        engine_name: str,
        configs: Sequence[dict[str, Any]],
        order: Sequence[int],
        on_done: OnDone,
    ) -> None:
        if engine_name != "sim":
            raise UserError(
                f"the {engine_name} engine runs only on this machine (it needs root and this "
                "machine's network namespaces): use --executor local"
            )
        if not order:
            return
        from .store import build_id

        ray, workers = self._init()
        task = ray.remote(num_cpus=1, max_retries=self.max_retries, retry_exceptions=False)(
            _ray_chunk
        )
        build = build_id(engine_name)
        chunks = self.chunks(configs, order, workers)
        queue = list(reversed(chunks))  # pop() takes the longest first
        pending: dict[Any, list[int]] = {}

        def submit() -> None:
            while queue and len(pending) < workers:
                chunk = queue.pop()
                ref = task.remote(engine_name, build, [configs[k] for k in chunk])
                pending[ref] = chunk

        try:
            submit()
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                chunk = pending.pop(ready[0])
                try:
                    outs = ray.get(ready[0])
                except ray.exceptions.RayError as e:
                    first = chunk[0]
                    raise EngineError(
                        f"a Ray task running trials {', '.join(map(str, chunk))} failed after "
                        f"{self.max_retries} retries (first: trial {first}, seed "
                        f"{configs[first]['seed']}): {_ray_message(e)}"
                    ) from None
                for k, (status, value, secs) in zip(chunk, outs, strict=True):
                    if status == "error":
                        raise _Rejected(k, value)
                    on_done(k, value, secs)
                submit()
        except BaseException:
            self._cancel(ray, pending)
            raise

    def _cancel(self, ray: Any, pending: dict[Any, list[int]]) -> None:
        """Stop the tasks in flight after an error or Ctrl-C.

        A Ray instance this process started is shut down, which kills its workers (a chunk's
        trial runs in Rust and does not see an interrupt). On a cluster the tasks are cancelled
        without ``force``: Ray interrupts each chunk between trials. ``force=True`` is avoided
        because it races with a task's reply in Ray's core worker (2.x: "Tried to complete task
        that was not pending", which aborts the driver after the run has been cleaned up)."""
        if _RAY_STARTED and not self.address:
            with contextlib.suppress(Exception):
                ray.shutdown()
            return
        for ref in pending:
            with contextlib.suppress(Exception):  # best effort: the task may have finished
                ray.cancel(ref)


def _ray_message(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[-1] if text else type(e).__name__


def get_executor(
    name: str | None = None,
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    scenario_run: dict[str, Any] | None = None,
) -> Executor:
    """The executor called *name* (see the module docstring for how it is chosen)."""
    run_opts = scenario_run or {}
    chosen = name or run_opts.get("executor") or os.environ.get("TCPLAB_EXECUTOR") or "local"
    if chosen not in EXECUTORS:
        raise UserError(
            f"unknown executor {chosen!r} (from "
            + (
                "--executor"
                if name
                else "[run] executor"
                if run_opts.get("executor")
                else "$TCPLAB_EXECUTOR"
            )
            + f"); choose one of: {', '.join(EXECUTORS)}"
        )
    if chosen == "local":
        return LocalExecutor(jobs)
    address = ray_address or run_opts.get("ray_address") or os.environ.get("TCPLAB_RAY_ADDRESS")
    return RayExecutor(address or None, jobs)


def run_trials(
    engine_name: str,
    configs: Sequence[dict[str, Any]],
    *,
    executor: Executor | None = None,
    order: Sequence[int] | None = None,
    progress: Progress | None = None,
    store: Any = None,
    labels: Sequence[str] | None = None,
) -> tuple[list[dict[str, Any]], list[float]]:
    """Run every config and return (raw results, engine seconds), both in trial order.

    *order*: the order to start trials in (default: as given). *store*: a
    :class:`~tcplab.store.TrialStore`; trials found there are not run, the others are stored as
    they finish. *labels* name trials in errors (default ``trial K``).
    """
    n = len(configs)
    executor = executor or LocalExecutor()
    order = list(order) if order is not None else list(range(n))
    raws: list[dict[str, Any] | None] = [None] * n
    seconds = [0.0] * n
    keys: list[str | None] = [None] * n
    done = 0
    lock = threading.Lock()
    if store is not None:
        for k in range(n):
            keys[k] = store.key(engine_name, configs[k])
            hit = store.get(keys[k]) if keys[k] else None
            if hit is not None:
                raws[k], seconds[k] = hit
                done += 1
    if progress is not None and done:
        progress(done, n)  # the trials found in the store

    def on_done(k: int, raw: dict[str, Any], secs: float) -> None:
        nonlocal done
        raws[k] = raw
        seconds[k] = secs
        if store is not None and keys[k]:
            store.put(keys[k], raw, secs)
        with lock:
            done += 1
            if progress is not None:
                progress(done, n)

    todo = [k for k in order if raws[k] is None]
    try:
        executor.execute(engine_name, configs, todo, on_done)
    except _Rejected as e:
        raise EngineError(
            f"{_describe(labels, e.index, configs[e.index])}: the {engine_name} engine rejected "
            f"the config: {e.message}"
        ) from None
    missing = [k for k in range(n) if raws[k] is None]
    if missing:  # an executor must deliver every trial or raise; never a silent gap
        k = missing[0]
        raise EngineError(
            f"{_describe(labels, k, configs[k])}: no result came back from {executor.name}"
        )
    return [r for r in raws if r is not None], seconds
