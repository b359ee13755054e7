"""Network namespaces, processes in them, and cleanup.

Everything a kernel run creates lives in network namespaces named ``tl-<run id>-...`` (the run id
is random per run, so two runs never collide). Interfaces are created *inside* those namespaces
(``ip -n NS link add ... peer ... netns NS2``), so nothing is ever added to, or changed in, the
root namespace: host interfaces and routes are never touched.

Each run records itself in ``/run/tcplab/<run id>.json`` (owner pid and its start time), so
``tcplab kernel-cleanup`` can tell a crashed run's leftovers from a run still in progress.
Cleanup kills every process inside the run's namespaces (``ip netns pids``), then deletes the
namespaces; deleting a namespace removes its veth ends, and with them their peers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PREFIX",
    "STATE_DIR",
    "CmdError",
    "RunNamespaces",
    "cleanup_leftovers",
    "list_namespaces",
    "new_run_id",
    "run_cmd",
]

PREFIX = "tl-"
STATE_DIR = Path(os.environ.get("TCPLAB_STATE_DIR", "/run/tcplab"))
_RUN_ID_RE = re.compile(r"^tl-([0-9a-f]{8})-")


class CmdError(RuntimeError):
    """A setup command failed; the message has the command and its stderr."""


def run_cmd(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> str:
    """Run a command, return its stdout; raise CmdError (with stderr) when it fails."""
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as e:
        raise CmdError(f"{argv[0]}: not found ({e})") from e
    except subprocess.TimeoutExpired as e:
        raise CmdError(f"timed out after {timeout}s: {' '.join(argv)}") from e
    if check and p.returncode != 0:
        raise CmdError(f"command failed ({p.returncode}): {' '.join(argv)}: {p.stderr.strip()}")
    return p.stdout


def new_run_id() -> str:
    return secrets.token_hex(4)


def list_namespaces() -> list[str]:
    """Names of all network namespaces known to ``ip netns``."""
    out = run_cmd(["ip", "netns", "list"], check=False)
    names = []
    for line in out.splitlines():
        if line.strip():
            names.append(line.split()[0])
    return names


def _proc_start_time(pid: int) -> int | None:
    """Start time of a process (clock ticks since boot), to guard against pid reuse."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after its ')'.
    rest = stat[stat.rindex(")") + 2 :].split()
    return int(rest[19])


def _ns_pids(ns: str) -> list[int]:
    out = run_cmd(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in out.split() if x.isdigit()]


def _kill_pids(pids: Iterable[int], grace: float) -> None:
    pids = [p for p in pids if p != os.getpid()]
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if Path(f"/proc/{p}").exists() and not _is_zombie(p)]
        if pids:
            time.sleep(0.02)
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].startswith("Z")


def delete_namespaces(names: Iterable[str], grace: float = 1.0) -> list[str]:
    """Kill every process in the namespaces, then delete them. Returns the names deleted."""
    names = list(names)
    existing = set(list_namespaces())
    names = [n for n in names if n in existing]
    pids: list[int] = []
    for n in names:
        pids.extend(_ns_pids(n))
    _kill_pids(pids, grace)
    deleted = []
    for n in names:
        for _ in range(3):
            try:
                run_cmd(["ip", "netns", "delete", n])
                deleted.append(n)
                break
            except CmdError:
                # A process may still hold it for an instant; kill again and retry.
                _kill_pids(_ns_pids(n), 0.2)
    return deleted


@dataclass
class RunNamespaces:
    """The namespaces of one run, with its state file; use as a context manager."""

    run_id: str
    names: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.run_id}.json"

    def ns_name(self, suffix: str) -> str:
        return f"{PREFIX}{self.run_id}-{suffix}"

    def _save(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "pid": os.getpid(),
            "start_time": _proc_start_time(os.getpid()),
            "namespaces": self.names,
            "created": time.time(),
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_file)

    def create(self, suffix: str) -> str:
        """Create namespace ``tl-<run>-<suffix>`` with loopback up, IPv6 off, and return its name.

        The state file is written *before* the namespace exists, so a crash in between leaves
        nothing the cleanup command would not find.
        """
        name = self.ns_name(suffix)
        self.names.append(name)
        self._save()
        run_cmd(["ip", "netns", "add", name])
        run_cmd(["ip", "-n", name, "link", "set", "lo", "up"])
        self.sysctl(
            name,
            {
                "net.ipv6.conf.all.disable_ipv6": "1",
                "net.ipv6.conf.default.disable_ipv6": "1",
            },
        )
        return name

    @staticmethod
    def sysctl(ns: str, values: dict[str, str]) -> None:
        """Set per-namespace sysctls inside *ns* and check they took (a host-global one, such as
        net.core.rmem_max, cannot be set from a namespace: CmdError)."""
        if not values:
            return
        args = ["ip", "netns", "exec", ns, "sysctl", "-q", "-w"]
        args += [f"{k}={v}" for k, v in values.items()]
        run_cmd(args, check=False)
        got = run_cmd(["ip", "netns", "exec", ns, "sysctl", "-n", *values], check=False)
        lines = got.splitlines()
        for (k, v), line in zip(values.items(), lines + [""] * len(values), strict=False):
            if line.split() != str(v).split():
                raise CmdError(f"sysctl {k} = {v} did not take effect in {ns} (it reads {line!r})")

    def popen(self, ns: str, argv: Sequence[str], **kw) -> subprocess.Popen:
        """Start a process inside *ns* in its own session (Ctrl-C reaches only us; we stop it)."""
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def close(self) -> None:
        """Stop our processes, kill whatever else runs in our namespaces, delete them."""
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.terminate()
        deadline = time.monotonic() + 1.0
        for p in self.procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=1.0)
        delete_namespaces(self.names)
        remaining = set(self.names) & set(list_namespaces())
        if not remaining:
            with contextlib.suppress(FileNotFoundError):
                self.state_file.unlink()
        self.procs.clear()

    def __enter__(self) -> RunNamespaces:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _owner_alive(state: dict) -> bool:
    pid = state.get("pid")
    if not isinstance(pid, int):
        return False
    st = _proc_start_time(pid)
    return st is not None and st == state.get("start_time")


def cleanup_leftovers(*, force: bool = False) -> list[str]:
    """Delete namespaces (and their processes) of tcplab runs whose owner is gone.

    With *force*, also those of runs still in progress. Returns the namespaces deleted.
    """
    by_run: dict[str, list[str]] = {}
    for n in list_namespaces():
        m = _RUN_ID_RE.match(n)
        if m:
            by_run.setdefault(m.group(1), []).append(n)
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("*.json"):
            by_run.setdefault(f.stem, [])
    deleted: list[str] = []
    for run_id, names in sorted(by_run.items()):
        state_file = STATE_DIR / f"{run_id}.json"
        state: dict = {}
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(state_file.read_text())
        if not force and _owner_alive(state):
            continue
        deleted += delete_namespaces(names)
        if not set(names) & set(list_namespaces()):
            with contextlib.suppress(FileNotFoundError):
                state_file.unlink()
    return deleted


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None
