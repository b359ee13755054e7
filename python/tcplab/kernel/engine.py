"""The kernel engine: one trial of a normalized config (docs/design.md §3) on real Linux TCP.

Order of a run (every step after the checks is undone in ``finally``, also on error, Ctrl-C or
SIGTERM):

1. checks that create nothing: root, tools, ``ip netns``, the link emulator, CCAs offered by
   the kernel, the OS personality, every TCP knob (:mod:`.linux`), queue disciplines;
2. namespaces, veth links, addresses, static neighbours, routes (:mod:`.topology`), offloads off,
   per-namespace sysctls and route attributes for the knobs, NIC shaping (htb) where asked;
3. the link emulator in its namespace (:mod:`.linkem`), iperf3 servers, the TCP_INFO sampler;
4. time zero ``t0``: flows start at ``t0 + start_ns`` (iperf3 clients) and are stopped (SIGINT)
   at ``t0 + stop_ns``; at ``t0 + duration_ns`` sampler and emulator stop;
5. the raw result (§4, ``"engine": "kernel"``) is assembled by :mod:`.result`, with the
   emulator's self-check deciding ``valid``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EngineError, EngineUnavailable
from . import linkem, linux, netstat, result, topology
from .ktrace import DEFAULT_BUFFER_KB, KTrace
from .netns import CmdError, RunNamespaces, have_tool, new_run_id, run_cmd

__all__ = ["KernelRun", "preflight", "run"]

SERVER_PORT0 = 5201
CLIENT_PORT0 = 40000
# Emulator thread priority (SCHED_FIFO): wake-ups must not wait behind iperf3 on 2 cores.
EMULATOR_RT_PRIORITY = 10
# The iperf3 servers' priority (SCHED_FIFO, below the emulator's). A Linux receiver acknowledges
# at once only while the window it would advertise has not shrunk (tcp_input.c
# `__tcp_ack_snd_check`: more than one full segment unacknowledged *and* `__tcp_select_window` ≥
# `rcv_wnd`); while the receiving application is not scheduled, the data it has not read holds
# the ACKs back until it reads, and then one stretch ACK releases a line-rate burst. On this
# shared 2-core machine an iperf3 server at the default policy lost the CPU for a scheduler slice
# several times a second: in C/CUBIC captures (2026-11-27, load 2.5-6) the receiver's ACK stream
# paused for 4-7 ms while data kept arriving 2.9-5.4 times a second, 0.7 times a second with every
# iperf3 process SCHED_FIFO (nice -10 did not help), 2 pauses in a 30-s run with the servers alone
# SCHED_FIFO; one such pause before a 235-segment burst cost a trial 117 retransmissions. Only the
# receiving side: clients sending flat out at SCHED_FIFO starved the servers (no data moved). The
# studies' hosts ran nothing else; the simulator's application reads at once. README "The
# real-kernel engine"; tests/test_kernel_root.py.
APP_RT_PRIORITY = 1


class Terminated(BaseException):
    """SIGTERM during a run (handled like Ctrl-C: clean up, then re-raise)."""


@dataclass
class FlowSetup:
    index: int
    flow: dict[str, Any]
    kind: str
    cca: str | None
    settings: linux.KernelFlowSettings
    src_addr: str = ""
    dst_addr: str = ""
    port: int = 0
    cport: int = 0


@dataclass
class Preflight:
    flows: list[FlowSetup]
    node_sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    #: (node, peer node) → route attributes
    route_attrs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    emulator: str = ""


def _need_root() -> None:
    if os.geteuid() != 0:
        raise EngineUnavailable(
            "the kernel engine needs root (it creates network namespaces and veth links); "
            "run as root, or use --engine sim. Nothing was created."
        )


def _need_tools() -> None:
    missing = [t for t in ("ip", "iperf3", "ethtool", "tc", "ss", "chrt") if not have_tool(t)]
    if missing:
        raise EngineUnavailable(
            f"the kernel engine needs {', '.join(missing)} (Debian: apt-get install iproute2 "
            "iperf3 ethtool). Nothing was created."
        )
    try:
        run_cmd(["ip", "netns", "list"])
    except CmdError as e:
        raise EngineUnavailable(f"`ip netns` does not work here: {e}. Nothing was created.") from e


def preflight(config: dict[str, Any]) -> Preflight:
    """Every check that needs no change to the system; raises before anything is created."""
    _need_root()
    _need_tools()
    if config.get("capture") and not have_tool("tcpdump"):
        raise EngineUnavailable("packet capture on the kernel engine needs tcpdump")
    how = linkem.available()
    if how is None:
        raise EngineUnavailable(
            "the link emulator is not available: tcplab._core has no linkem_serve (rebuild the "
            "extension with `maturin develop`) and no tcplab-linkem binary was found. "
            "Nothing was created."
        )
    meta = config.get("meta") or {}
    nodes = {n["name"]: n for n in config["nodes"]}
    mtu_of: dict[str, int] = {}
    for link in config["links"]:
        for end in ("a", "b"):
            mtu_of.setdefault(link[end], int(link.get("mtu", 1500)))
        for d in ("ab", "ba"):
            q = (link[d].get("queue") or {}).get("kind", "droptail")
            if q != "droptail":
                raise EngineError(
                    f"link {link['name']!r} ({d}): queue {q!r} is not supported by the kernel "
                    "engine's link emulator (droptail only)"
                )
    available = linux.available_ccas()
    flows: list[FlowSetup] = []
    node_sysctls: dict[str, dict[str, str]] = {}
    route_attrs: dict[tuple[str, str], dict[str, str]] = {}

    def merge(target: dict[str, str], add: dict[str, str], where: str, fname: str) -> None:
        for k, v in add.items():
            if k in target and target[k] != v:
                raise EngineError(
                    f"flow {fname!r}: {where} needs {k} = {v}, but another flow there needs "
                    f"{target[k]} (these are per-namespace settings in the kernel engine)"
                )
            target[k] = v

    for i, f in enumerate(config["flows"]):
        if f["src"] not in nodes or f["dst"] not in nodes:
            raise EngineError(f"flow {f['name']!r}: unknown src/dst node")
        if f["src"] == f["dst"]:
            raise EngineError(f"flow {f['name']!r}: src and dst are the same node")
        try:
            linux.check_personality(f, meta)
            if f["kind"] == "tcp":
                cca = linux.check_cca(f, available)
                settings = linux.kernel_plan_for_flow(f, mtu_of.get(f["src"], 1500))
            else:
                cca, settings = None, linux.KernelFlowSettings()
        except linux.KnobRefusal as e:
            raise EngineError(str(e)) from e
        merge(node_sysctls.setdefault(f["src"], {}), settings.sender_sysctls, f["src"], f["name"])
        merge(node_sysctls.setdefault(f["dst"], {}), settings.receiver_sysctls, f["dst"], f["name"])
        if settings.sender_route:
            merge(
                route_attrs.setdefault((f["src"], f["dst"]), {}),
                settings.sender_route,
                f"the route {f['src']}→{f['dst']}",
                f["name"],
            )
        if settings.receiver_route:
            merge(
                route_attrs.setdefault((f["dst"], f["src"]), {}),
                settings.receiver_route,
                f"the route {f['dst']}→{f['src']}",
                f["name"],
            )
        flows.append(
            FlowSetup(
                index=i,
                flow=f,
                kind=f["kind"],
                cca=cca,
                settings=settings,
                port=SERVER_PORT0 + i,
                cport=CLIENT_PORT0 + i,
            )
        )
    if len(flows) > 20000:
        raise EngineError("too many flows for the kernel engine's port plan")
    return Preflight(flows=flows, node_sysctls=node_sysctls, route_attrs=route_attrs, emulator=how)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _ip4(addr: str) -> list[int]:
    return [int(x) for x in addr.split(".")]


class KernelRun:
    """One trial; :meth:`execute` returns the raw result."""

    def __init__(self, config: dict[str, Any], *, workdir: Path | None = None) -> None:
        self.cfg = config
        self.pre = preflight(config)
        try:
            self.plan = topology.plan(config)
        except ValueError as e:
            raise EngineError(f"topology: {e}") from e
        for fs in self.pre.flows:
            if (fs.flow["src"], fs.flow["dst"]) not in self.plan.next_hop:
                raise EngineError(f"flow {fs.flow['name']!r}: no route from src to dst")
            fs.src_addr = self.plan.addr_of(fs.flow["src"])
            fs.dst_addr = self.plan.addr_of(fs.flow["dst"])
        self.keep = workdir is not None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="tcplab-kernel-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ns = RunNamespaces(new_run_id())
        self.node_ns: dict[str, str] = {}
        self.em_ns = ""
        self.log: list[str] = []

    # -- setup -------------------------------------------------------------------------------
    def _emulator_config(self) -> dict[str, Any]:
        cfg = self.cfg
        links = []
        for lk in self.plan.links:
            links.append(
                {
                    "name": lk.name,
                    "a_if": lk.em_a,
                    "b_if": lk.em_b,
                    "a": lk.a,
                    "b": lk.b,
                    "mtu": lk.mtu,
                    "ab": lk.ab,
                    "ba": lk.ba,
                    "monitor": lk.monitor,
                }
            )
        watch, count = [], []
        for fs in self.pre.flows:
            f = fs.flow
            hops = self.plan.path(f["src"], f["dst"])
            if fs.kind == "tcp":
                li, d = hops[0]
                watch.append(
                    {
                        "flow": f["name"],
                        "link": li,
                        "data_dir": d,
                        "src": _ip4(fs.src_addr),
                        "dst": _ip4(fs.dst_addr),
                        "sport": fs.cport,
                        "dport": fs.port,
                    }
                )
            li, d = hops[-1]
            count.append(
                {
                    "flow": f["name"],
                    "link": li,
                    "dir": d,
                    "proto": 6 if fs.kind == "tcp" else 17,
                    "src": _ip4(fs.src_addr),
                    "dst": _ip4(fs.dst_addr),
                    "sport": fs.cport,
                    "dport": fs.port,
                }
            )
        # Loss models act on the scenario's flows only: iperf3's control connections (which the
        # simulator does not have) neither get lost nor count in a "list" loss model.
        loss_only = [
            {
                "proto": 6 if fs.kind == "tcp" else 17,
                "a": _ip4(fs.src_addr),
                "a_port": fs.cport,
                "b": _ip4(fs.dst_addr),
                "b_port": fs.port,
            }
            for fs in self.pre.flows
        ]
        return {
            "links": links,
            "loss_only": loss_only,
            "interval_ns": int(cfg.get("interval_ns", 1_000_000_000)),
            "seed": int(cfg.get("seed", 0)) & 0xFFFFFFFFFFFFFFFF,
            # A safety net: an orphaned emulator stops by itself.
            "max_runtime_ns": int(cfg["duration_ns"]) + 120_000_000_000,
            "spin_ns": 0,
            "control_stdin": True,
            "watch": watch,
            "count": count,
            "realtime_priority": EMULATOR_RT_PRIORITY,
        }

    def _apply_routes(self) -> None:
        for (a, b), attrs in self.pre.route_attrs.items():
            li, d = self.plan.next_hop[(a, b)]
            lk = self.plan.links[li]
            dst = self.plan.addr_of(b)
            via = lk.b_addr if d == "ab" else lk.a_addr
            argv = ["ip", "-n", self.node_ns[a], "route", "replace", f"{dst}/32"]
            if via != dst:
                argv += ["via", via]
            argv += ["dev", lk.node_if]
            for k, v in attrs.items():
                argv += [k, v]
            run_cmd(argv)

    def _apply_nic(self) -> None:
        """Host NIC rate / ring (nodes[].nic_rate_bps, nic_ring_pkts): an htb class at the rate
        with a pfifo of the ring's length on the host's interface, so the host's own stack
        queues and is held back as behind a real NIC (the simulator caps the host's egress
        channel the same way: crates/tcplab-sim/src/net.rs)."""
        for n in self.cfg["nodes"]:
            rate, ring = n.get("nic_rate_bps"), n.get("nic_ring_pkts")
            if n.get("kind") != "host" or (rate is None and ring is None):
                continue
            for lk in self.plan.links:
                if n["name"] not in (lk.a, lk.b):
                    continue
                chan = lk.ab if lk.a == n["name"] else lk.ba
                r = min(int(rate), int(chan["rate_bps"])) if rate else int(chan["rate_bps"])
                burst = max(lk.mtu + 14, r // 8 // 1000)  # ≈ 1 ms at the rate
                nsn = self.node_ns[n["name"]]
                dev = lk.node_if
                run_cmd(
                    [
                        "ip",
                        "netns",
                        "exec",
                        nsn,
                        "tc",
                        "qdisc",
                        "replace",
                        "dev",
                        dev,
                        "root",
                        "handle",
                        "1:",
                        "htb",
                        "default",
                        "1",
                    ]
                )
                run_cmd(
                    [
                        "ip",
                        "netns",
                        "exec",
                        nsn,
                        "tc",
                        "class",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        "1:",
                        "classid",
                        "1:1",
                        "htb",
                        "rate",
                        f"{r}bit",
                        "ceil",
                        f"{r}bit",
                        "burst",
                        str(burst),
                        "cburst",
                        str(burst),
                    ]
                )
                run_cmd(
                    [
                        "ip",
                        "netns",
                        "exec",
                        nsn,
                        "tc",
                        "qdisc",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        "1:1",
                        "handle",
                        "10:",
                        "pfifo",
                        "limit",
                        str(ring or 1000),
                    ]
                )

    def _start_captures(self) -> list[subprocess.Popen]:
        """tcpdump for each ``capture`` entry (docs/design.md §3; names "<link>.<dir>").

        One direction X→Y is captured on X's interface, outgoing only: the packets handed to
        the link, including any its queue will drop. Both directions of a link are captured on
        side a's interface (a→b as handed to the link, b→a as delivered to a). Headers only
        (128-byte snap length), as the simulator's captures."""
        procs = []
        for cap in self.cfg.get("capture") or []:
            chans = list(cap.get("channels") or [])
            links = {c.rsplit(".", 1)[0] for c in chans}
            if len(links) != 1:
                raise EngineError(
                    f"capture {cap.get('name')!r}: the kernel engine captures one link per "
                    f"capture (got {sorted(links)})"
                )
            (lname,) = links
            lk = next((x for x in self.plan.links if x.name == lname), None)
            if lk is None:
                raise EngineError(f"capture {cap.get('name')!r}: no link {lname!r}")
            dirs = {c.rsplit(".", 1)[1] for c in chans}
            if dirs == {"ba"}:
                node, q = lk.b, ["-Q", "out"]
            elif dirs == {"ab"}:
                node, q = lk.a, ["-Q", "out"]
            else:
                node, q = lk.a, []
            path = cap.get("path") or str(self.workdir / f"{cap.get('name', lname)}.pcap")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            procs.append(
                self.ns.popen(
                    self.node_ns[node],
                    [
                        "tcpdump",
                        "-i",
                        lk.node_if,
                        "-w",
                        path,
                        "-s",
                        "128",
                        "-U",
                        "-n",
                        "-Z",
                        "root",
                        *q,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        return procs

    def _wait_listening(self, ns: str, ports: set[int], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            out = run_cmd(["ip", "netns", "exec", ns, "ss", "-Hltn"], check=False)
            listening = set()
            for line in out.splitlines():
                parts = line.split()
                if len(parts) >= 4 and ":" in parts[3]:
                    with contextlib.suppress(ValueError):
                        listening.add(int(parts[3].rsplit(":", 1)[1]))
            if ports <= listening:
                return
            if time.monotonic() > deadline:
                raise EngineError(
                    f"iperf3 servers did not start listening on {sorted(ports - listening)}"
                )
            time.sleep(0.02)

    def _client_argv(self, fs: FlowSetup) -> list[str]:
        f = self.cfg["flows"][fs.index]
        interval_s = min(60.0, max(0.1, self.cfg.get("interval_ns", 1e9) / 1e9))
        argv = ["iperf3", "-c", fs.dst_addr, "-p", str(fs.port), "--cport", str(fs.cport)]
        argv += ["-J", "-i", f"{interval_s:g}", "--connect-timeout", "5000"]
        stop = min(int(f.get("stop_ns") or self.cfg["duration_ns"]), int(self.cfg["duration_ns"]))
        if fs.kind == "tcp":
            argv += ["-C", str(fs.cca)]
            if f.get("bytes"):
                argv += ["-n", str(int(f["bytes"]))]
            else:
                argv += ["-t", str(linux.iperf_time_arg(int(f.get("start_ns", 0)), stop))]
            argv += fs.settings.iperf_args
        else:
            argv += [
                "-u",
                "-b",
                str(int(f["rate_bps"])),
                "-l",
                str(int(f.get("payload_bytes", 1470))),
            ]
            argv += ["-t", str(linux.iperf_time_arg(int(f.get("start_ns", 0)), stop))]
        return argv

    # -- run ---------------------------------------------------------------------------------
    def execute(self) -> dict[str, Any]:
        cfg = self.cfg
        duration = int(cfg["duration_ns"])
        interval = int(cfg.get("interval_ns", 1_000_000_000))
        m = max(1, -(-interval // 20_000_000))  # sampler ticks per interval: period ≤ 20 ms
        if cfg.get("record_changes"):
            m = max(1, -(-interval // 5_000_000))
        period = interval // m
        wd = self.workdir
        servers: dict[int, subprocess.Popen] = {}
        clients: dict[int, subprocess.Popen] = {}
        emu: linkem.Emulator | None = None
        sampler: subprocess.Popen | None = None
        em_report: dict[str, Any] | None = None
        t0 = 0
        steal_before = steal_after = None
        starts_mono: dict[int, int] = {}
        kmeta = (cfg.get("meta") or {}).get("kernel") or {}
        ktrace_events = list(kmeta.get("tracepoints") or [])
        kt: KTrace | None = None
        if ktrace_events:
            kt = KTrace(
                ktrace_events,
                self.ns.run_id,
                [p for fs in self.pre.flows if fs.kind == "tcp" for p in (fs.cport, fs.port)],
                buffer_kb=int(kmeta.get("ktrace_buffer_kb") or DEFAULT_BUFFER_KB),
            )
        with _sigterm_raises(), self.ns, contextlib.ExitStack() as cleanup:
            built = topology.build(self.plan, self.ns, node_sysctls=self.pre.node_sysctls)
            self.node_ns, self.em_ns = built["nodes"], built["em"]
            self._apply_routes()
            self._apply_nic()
            emu = linkem.Emulator(self.ns.popen, self.em_ns, self._emulator_config(), wd)
            emu.start()
            captures = self._start_captures()
            # iperf3 servers (one per flow, one test each).
            by_ns: dict[str, set[int]] = {}
            for fs in self.pre.flows:
                dst_ns = self.node_ns[fs.flow["dst"]]
                with open(wd / f"server{fs.index}.json", "wb") as out:
                    servers[fs.index] = self.ns.popen(
                        dst_ns,
                        [*app_priority(), "iperf3", "-s", "-1", "-p", str(fs.port), "-J"],
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                by_ns.setdefault(dst_ns, set()).add(fs.port)
            for nsn, ports in by_ns.items():
                self._wait_listening(nsn, ports)
            # TCP_INFO sampler over the namespaces of TCP endpoints.
            sample_ns: list[str] = []
            for fs in self.pre.flows:
                if fs.kind == "tcp":
                    for node in (fs.flow["src"], fs.flow["dst"]):
                        if self.node_ns[node] not in sample_ns:
                            sample_ns.append(self.node_ns[node])
            samples_path = wd / "samples.npz"
            env = dict(os.environ)
            env["PYTHONPATH"] = (
                str(Path(__file__).resolve().parents[2]) + os.pathsep + env.get("PYTHONPATH", "")
            )
            with open(wd / "sampler.stderr", "wb") as err:
                sampler = self.ns.popen(
                    self.em_ns,
                    [sys.executable, "-m", "tcplab.kernel.sampler"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    env=env,
                )
            assert sampler.stdin is not None and sampler.stdout is not None
            sampler.stdin.write(
                (
                    json.dumps(
                        {
                            "namespaces": sample_ns,
                            "period_ns": period,
                            "out": str(samples_path),
                            "max_runtime_s": duration / 1e9 + 120,
                        }
                    )
                    + "\n"
                ).encode()
            )
            sampler.stdin.flush()
            line = sampler.stdout.readline().decode().strip()
            if line != "ready":
                raise EngineError(
                    f"TCP_INFO sampler failed: {(wd / 'sampler.stderr').read_text()[-2000:]}"
                )
            # The hosts' own TCP counters, read before time zero (the reads
            # take a subprocess each) and after the last flow (kernel/netstat.py).
            tcp_hosts = sorted(
                {
                    fs.flow[end]
                    for fs in self.pre.flows
                    if fs.kind == "tcp"
                    for end in ("src", "dst")
                }
            )
            counters_before = {h: netstat.read(self.node_ns[h]) for h in tcp_hosts}
            if kt is not None:
                # The kernel's tracepoints (kernel/ktrace.py): the run's own tracefs instance,
                # removed when the run ends, on error too.
                cleanup.callback(kt.close)
                kt.start()
            # Time zero, a little ahead so every process has it before anything happens.
            t0 = time.monotonic_ns() + 50_000_000
            steal_before = cpu_steal_ns()
            emu.begin(t0)
            sampler.stdin.write(f"start {t0}\n".encode())
            sampler.stdin.flush()
            events: list[tuple[int, int, int]] = []
            for fs in self.pre.flows:
                f = fs.flow
                start = int(f.get("start_ns", 0))
                stop = min(int(f.get("stop_ns") or duration), duration)
                if start >= duration:
                    continue
                events.append((start, 0, fs.index))
                events.append((stop, 1, fs.index))
            events.sort()
            for t, kind, i in events:
                self._sleep_until(t0 + t, emu)
                fs = self.pre.flows[i]
                if kind == 0:
                    src_ns = self.node_ns[fs.flow["src"]]
                    with open(wd / f"client{i}.json", "wb") as out:
                        starts_mono[i] = time.monotonic_ns()
                        clients[i] = self.ns.popen(
                            src_ns, self._client_argv(fs), stdout=out, stderr=subprocess.STDOUT
                        )
                elif i in clients and clients[i].poll() is None:
                    clients[i].send_signal(signal.SIGINT)
            self._sleep_until(t0 + duration + 30_000_000, emu)
            sampler.stdin.write(b"stop\n")
            sampler.stdin.flush()
            em_report = emu.stop()
            steal_after = cpu_steal_ns()
            if kt is not None:
                kt.stop()
            try:
                sampler.wait(timeout=60)
            except subprocess.TimeoutExpired as e:
                raise EngineError("the TCP_INFO sampler did not finish") from e
            if sampler.returncode != 0:
                raise EngineError(
                    "the TCP_INFO sampler failed: "
                    + (wd / "sampler.stderr").read_text()[-2000:].strip()
                )
            for p in clients.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            for p in captures:
                p.terminate()
            for p in list(clients.values()) + list(servers.values()) + captures:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.terminate()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        p.wait(timeout=2)
            counters = {
                h: netstat.delta(counters_before[h], netstat.read(self.node_ns[h]))
                for h in tcp_hosts
            }
        # Namespaces and processes are gone here; assemble the result from the files.
        iperf = {}
        for fs in self.pre.flows:
            iperf[fs.index] = {
                "client": _read_json(wd / f"client{fs.index}.json"),
                "server": _read_json(wd / f"server{fs.index}.json"),
            }
        samples = result.load_samples(wd / "samples.npz")
        raw = result.assemble(
            cfg,
            self.plan,
            [
                result.FlowInfo(
                    index=fs.index,
                    name=fs.flow["name"],
                    kind=fs.kind,
                    src_ns_index=_index_or(sample_ns, self.node_ns[fs.flow["src"]]),
                    dst_ns_index=_index_or(sample_ns, self.node_ns[fs.flow["dst"]]),
                    src_addr=fs.src_addr,
                    dst_addr=fs.dst_addr,
                    port=fs.port,
                    cport=fs.cport,
                    launched_ns=(starts_mono[fs.index] - t0) if fs.index in starts_mono else None,
                    applied=fs.settings.applied,
                    cca=fs.cca,
                )
                for fs in self.pre.flows
            ],
            samples=samples,
            period_ns=period,
            em_report=em_report or {},
            iperf=iperf,
            t0=t0,
            steal_ns=(
                steal_after - steal_before
                if steal_before is not None and steal_after is not None
                else None
            ),
        )
        raw["kernel"]["run_id"] = self.ns.run_id
        raw["kernel"]["netstat"] = counters
        raw["kernel"]["emulator_runtime"] = self.pre.emulator
        if kt is not None:
            raw["kernel"]["tracepoints"] = kt.result(
                t0,
                [(fs.flow["name"], fs.cport, fs.port) for fs in self.pre.flows if fs.kind == "tcp"],
            )
        if not self.keep and not os.environ.get("TCPLAB_KERNEL_KEEP"):
            shutil.rmtree(wd, ignore_errors=True)
        else:
            raw["kernel"]["workdir"] = str(wd)
        return raw

    @staticmethod
    def _sleep_until(t_mono_ns: int, emu: linkem.Emulator) -> None:
        while True:
            left = t_mono_ns - time.monotonic_ns()
            if left <= 0:
                return
            if not emu.alive():
                raise EngineError(f"the link emulator stopped during the run: {emu.stderr()}")
            time.sleep(min(left / 1e9, 0.05))


def app_priority() -> list[str]:
    """The command prefix that runs an iperf3 server at :data:`APP_RT_PRIORITY` (SCHED_FIFO)."""
    return ["chrt", "--fifo", str(APP_RT_PRIORITY)]


def _index_or(items: list[str], x: str) -> int:
    return items.index(x) if x in items else -1


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        # iperf3 may print a line before its JSON when interrupted; take the JSON object.
        start = text.find("{")
        with contextlib.suppress(ValueError):
            return json.loads(text[start:]) if start >= 0 else None
        return None


# A trial the emulator's self-check marks invalid (result.py TOLERANCES: the host did not keep
# the configured rate or delay) is run again this many times by default before the invalid result
# is kept. Such misses come from the host, not the scenario: on an otherwise idle 2-core VM a run
# at 20 Mbit/s normally leaves 1 % of packets ≥ 0.11-0.17 ms late (tolerance 2 ms); on fresh CI
# machines (2026-11-29) one run had every direction's 1 % ≥ 2.4-3.4 ms late, and in another
# (a window-limited 10 Mbit/s flow, 4 s) two attempts in a row had the bottleneck's 1 % ≥ 2.8 ms
# late while the access links, whose packets leave as soon as they arrive, were on time: a stall
# of the whole machine (nothing arrives while it lasts; only packets already in flight wait), not
# of one thread (the emulator runs SCHED_FIFO). Such stalls come in spells, so each rerun waits
# first, RERUN_PAUSE_S doubling per attempt, for the spell to pass. A path the host cannot carry
# at all (README: ≥ 500 Mbit/s here) stays invalid on every attempt. Every discarded attempt's
# reasons are kept in the result (`kernel.discarded_attempts`) and the run summary.
DEFAULT_RERUN_INVALID = 2
RERUN_PAUSE_S = 2.0


def rerun_invalid(config: dict[str, Any]) -> int:
    """How many times an invalid trial of *config* is run again (``meta.kernel.rerun_invalid``,
    set by ``tcplab run --rerun-invalid N``; default :data:`DEFAULT_RERUN_INVALID`)."""
    kmeta = (config.get("meta") or {}).get("kernel") or {}
    n = kmeta.get("rerun_invalid")
    return DEFAULT_RERUN_INVALID if n is None else int(n)


def run(config: dict[str, Any]) -> dict[str, Any]:
    """Run one trial of *config* on the kernel; the raw result (docs/design.md §4).

    An attempt marked invalid is repeated up to :func:`rerun_invalid` times with the same config
    (same seed, so the same emulated path), the k-th repetition after a pause of
    ``RERUN_PAUSE_S · 2^(k-1)`` seconds; the first valid attempt, else the last one, is
    returned, with the reasons of the attempts discarded before it in
    ``raw["kernel"]["discarded_attempts"]`` (a list of lists of reasons)."""
    discarded: list[list[str]] = []
    reruns = rerun_invalid(config)
    while True:
        raw = _run_once(config)
        if raw.get("valid", True) or len(discarded) >= reruns:
            break
        discarded.append(list(raw.get("invalid_reasons") or []))
        time.sleep(RERUN_PAUSE_S * 2 ** (len(discarded) - 1))
    raw.setdefault("kernel", {})["discarded_attempts"] = discarded
    return raw


def cpu_steal_ns() -> int | None:
    """CPU time the hypervisor gave to something else while this machine's CPUs wanted to run,
    summed over CPUs (proc(5): ``/proc/stat``, the ``cpu`` line's 8th value, "steal", in
    USER_HZ ticks); None where the kernel does not report it."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        ticks = int(fields[8])
    except (OSError, IndexError, ValueError):
        return None
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _run_once(config: dict[str, Any]) -> dict[str, Any]:
    try:
        return KernelRun(config).execute()
    except CmdError as e:
        raise EngineError(f"kernel engine setup failed: {e}") from e
    except linkem.EmulatorError as e:
        raise EngineError(str(e)) from e
