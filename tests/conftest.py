"""Shared fixtures for the Python tests.

Tests that do not need the Rust core use :data:`FAKE_CATALOG`, a catalog built from the knob and
CCA descriptions the core is specified to provide (issue text; docs/design.md §3), and
:func:`synthetic_engine`, which returns a raw result (§4) computed from the config and its seed.
Tests that need the real core are marked ``needs_core`` and are skipped when it is not built.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Runs the tests record (tcplab.runs) and trials they store (tcplab.store) go to a scratch results
# directory, never the user's ~/.local/share/tcplab.
os.environ["TCPLAB_RESULTS"] = tempfile.mkdtemp(prefix="tcplab-test-results-")
sys.path.insert(0, str(ROOT / "python"))

from tcplab.catalog import Catalog  # noqa: E402
from tcplab.results import SERIES_COLUMNS  # noqa: E402

MS = 1_000_000
S = 1_000_000_000

_KNOBS: list[dict[str, Any]] = [
    {"name": "mss", "kind": "bytes", "default": 1460},
    {"name": "initial_window", "kind": "iw", "default": 10, "choices": ["rfc3390", "rfc6928"]},
    {"name": "initial_ssthresh", "kind": "bytes", "default": None},
    {"name": "sndbuf", "kind": "bytes", "default": 4 * 2**20},
    {"name": "rcvbuf", "kind": "bytes", "default": 6 * 2**20},
    {"name": "delayed_ack", "kind": "bool", "default": True},
    {"name": "delack_segments", "kind": "int", "default": 2},
    {"name": "delack_timeout", "kind": "duration", "default": 200 * MS},
    {"name": "quickack_segments", "kind": "int", "default": 0},
    {"name": "min_rto", "kind": "duration", "default": 200 * MS},
    {"name": "initial_rto", "kind": "duration", "default": 1 * S},
    {"name": "max_rto", "kind": "duration", "default": 120 * S},
    {"name": "clock_granularity", "kind": "duration", "default": 1 * MS},
    {"name": "rto_min_on_variance", "kind": "bool", "default": False},
    {"name": "timestamps", "kind": "bool", "default": True},
    {"name": "sack", "kind": "bool", "default": True},
    {"name": "dsack", "kind": "bool", "default": True},
    {"name": "window_scaling", "kind": "bool", "default": True},
    {"name": "abc", "kind": "int", "default": 0},
    {"name": "cwnd_unit", "kind": "choice", "default": "packets", "choices": ["packets", "bytes"]},
    {
        "name": "recovery",
        "kind": "choice",
        "default": "sack",
        "choices": ["sack", "newreno", "reno"],
    },
    {"name": "limited_transmit", "kind": "bool", "default": True},
    {"name": "dupthresh", "kind": "int", "default": 3},
    {"name": "isn", "kind": "int", "default": None},
    {"name": "syn_retries", "kind": "int", "default": 6},
    {"name": "pacing", "kind": "bool", "default": False},
    {"name": "app_read_rate", "kind": "rate", "default": None},
    {"name": "loss_factor", "kind": "float", "default": 0.5},
]
_CCAS: list[dict[str, Any]] = [
    {
        "name": "cubic",
        "summary": "CUBIC",
        "source": "RFC 9438",
        "params": [
            {"name": "beta", "kind": "float", "default": 0.7},
            {"name": "hystart", "kind": "bool", "default": True},
            {"name": "c", "kind": "float", "default": 0.4},
        ],
    },
    {"name": "reno", "summary": "Reno", "source": "RFC 5681", "params": []},
    {"name": "newreno", "summary": "NewReno", "source": "RFC 6582", "params": []},
    {
        "name": "htcp",
        "summary": "H-TCP",
        "source": "Leith & Shorten 2004",
        "params": [{"name": "delta_l", "kind": "duration", "default": S}],
    },
]

FAKE_CATALOG = Catalog.from_lists(_KNOBS, _CCAS)


def core_available() -> bool:
    try:
        import tcplab._core  # noqa: F401
    except ImportError:
        return False
    return True


if os.environ.get("CI") and not core_available():
    # In CI nothing may be skipped for want of a build: `make test` builds the extension into
    # python/tcplab first (make dev).
    raise RuntimeError("CI: tcplab._core is not importable from python/tcplab; run `make dev`")

needs_core = pytest.mark.skipif(not core_available(), reason="tcplab._core is not built")


def sigint_default() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT, as Ctrl-C would: give it
    the default disposition. A runner started in the background by a non-interactive shell
    (`cmd &`, `nohup`) ignores SIGINT, every descendant inherits that, and Python then installs
    no KeyboardInterrupt handler, so the signal would do nothing (measured: CI launched that way
    failed exactly the SIGINT tests)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def back_to_back_share(doc: dict[str, Any], engine: str = "sim") -> float:
    """identify's ``burst_frac`` (the share of new-data departures that follow the previous one
    back to back) of the sender-side capture of the scenario's flow ``ident``."""
    import tcplab
    from tcplab.identify.references import features_of_capture

    res = tcplab.run(doc, engine=engine, pcap=["host:ident.snd"])
    _, ex = features_of_capture(Path(res.captures[0]))
    share = ex.features["burst_frac"]
    assert share is not None, ex.why_missing.get("burst_frac")
    return float(share)


def kernel_engine_skip_reason() -> str | None:
    """Why the kernel engine cannot run here (root, the tools, ``ip netns``, the link
    emulator), or None when it can."""
    import shutil
    import subprocess

    if os.environ.get("TCPLAB_SKIP_KERNEL"):
        return "TCPLAB_SKIP_KERNEL is set (run without namespaces on a shared machine)"
    if os.geteuid() != 0:
        return "the kernel engine needs root"
    for tool in ("ip", "iperf3", "ethtool", "tc", "ss"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    try:
        subprocess.run(["ip", "netns", "list"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return "`ip netns` is not available"
    try:
        from tcplab.kernel import linkem
    except ImportError as e:
        return f"tcplab.kernel cannot be imported: {e}"
    if linkem.available() is None:
        return "the link emulator (tcplab._core.linkem_serve or tcplab-linkem) is not built"
    return None


@pytest.fixture
def fake_catalog(monkeypatch: pytest.MonkeyPatch) -> Catalog:
    """Make FAKE_CATALOG the default catalog (as if the core provided it)."""
    import tcplab.catalog

    monkeypatch.setattr(tcplab.catalog, "_cached", FAKE_CATALOG)
    return FAKE_CATALOG


def synthetic_engine(config: dict[str, Any]) -> dict[str, Any]:
    """A raw result (§4) with numbers drawn from the config's seed (deterministic)."""
    rng = random.Random(config["seed"])
    dur = config["duration_ns"]
    step = config["interval_ns"]
    flows = []
    series: dict[str, list[Any]] = {k: [] for k in SERIES_COLUMNS}
    total_pkts = 0
    bottleneck = next(link for link in config["links"] if link["name"] == "bottleneck")
    for f in config["flows"]:
        active = min(f["stop_ns"], dur) - f["start_ns"]
        rate = rng.uniform(0.2, 0.5) * bottleneck["ab"]["rate_bps"]
        delivered = int(rate * active / 8e9)
        segs = delivered // 1448 + 1
        retx = rng.randint(0, 50) if f["kind"] == "tcp" else None
        total_pkts += segs
        tcp = f["kind"] == "tcp"
        flows.append(
            {
                "name": f["name"],
                "group": f["group"],
                "kind": f["kind"],
                "src": f["src"],
                "dst": f["dst"],
                "bytes_delivered": delivered,
                "data_packets_delivered": segs,
                "bytes_sent": delivered + (retx or 0) * 1448,
                "segments_sent": segs + (retx or 0) if tcp else None,
                "retransmits": retx,
                "fast_retransmits": (retx or 0) // 2 if tcp else None,
                "timeouts": rng.randint(0, 2) if tcp else None,
                "dupacks": rng.randint(0, 100) if tcp else None,
                "sack_blocks": rng.randint(0, 100) if tcp else None,
                "completion_ns": None,
                "udp_sent": None if tcp else segs + 10,
                "udp_received": None if tcp else segs,
            }
        )
        cum = 0
        nan = float("nan")
        for t in range(step, dur + 1, step):
            g = rate * rng.uniform(0.8, 1.2) if f["start_ns"] < t <= f["stop_ns"] else 0.0
            cum += int(g * step / 8e9)
            series["flow"].append(f["name"])
            series["time_ns"].append(t)
            series["goodput_bps"].append(g)
            series["delivered_bytes"].append(cum)
            cw = rng.randint(10, 1000) if tcp else None
            series["cwnd_bytes"].append(cw * 1448 if tcp else nan)
            series["cwnd_segments"].append(cw if tcp else nan)
            series["ssthresh_bytes"].append(2**31 if tcp else nan)
            series["srtt_ns"].append(rng.randint(50, 60) * MS if tcp else nan)
            series["rttvar_ns"].append(rng.randint(1, 5) * MS if tcp else nan)
            series["rto_ns"].append(250 * MS if tcp else nan)
            series["snd_una"].append(cum if tcp else nan)
            series["snd_nxt"].append(cum + 1448 if tcp else nan)
            series["in_flight_bytes"].append(1448 if tcp else nan)
            series["rwnd_bytes"].append(2**20 if tcp else nan)
            for k in ("retransmits", "fast_retransmits", "timeouts", "dupacks", "sack_blocks"):
                series[k].append(0 if tcp else nan)
            series["pacing_rate_bps"].append(nan)
    links = []
    queue_series: dict[str, list[Any]] = {
        k: []
        for k in (
            "link",
            "dir",
            "time_ns",
            "queue_pkts",
            "queue_bytes",
            "drops",
            "lost",
            "utilization",
        )
    }
    for link in config["links"]:
        for d in ("ab", "ba"):
            busy = int(dur * rng.uniform(0.1, 0.99))
            links.append(
                {
                    "name": link["name"],
                    "dir": d,
                    "from": link["a"] if d == "ab" else link["b"],
                    "to": link["b"] if d == "ab" else link["a"],
                    "rate_bps": link[d]["rate_bps"],
                    "delay_ns": link[d]["delay_ns"],
                    "packets": total_pkts,
                    "bytes": total_pkts * 1500,
                    "drops": rng.randint(0, 100),
                    "lost": 0,
                    "busy_ns": busy,
                    "max_queue_pkts": rng.randint(0, 100),
                }
            )
            if link["monitor"]:
                for t in range(step, dur + 1, step):
                    queue_series["link"].append(link["name"])
                    queue_series["dir"].append(d)
                    queue_series["time_ns"].append(t)
                    q = rng.randint(0, 100)
                    queue_series["queue_pkts"].append(q)
                    queue_series["queue_bytes"].append(q * 1500)
                    queue_series["drops"].append(rng.randint(0, 3))
                    queue_series["lost"].append(0)
                    queue_series["utilization"].append(rng.random())
    return {
        "engine": "sim",
        "sim_packets": total_pkts,
        "events": total_pkts * 7,
        "end_ns": dur,
        "flows": flows,
        "links": links,
        "series": series,
        "queue_series": queue_series,
    }


def _tl_namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tl-")}


@pytest.fixture
def kernel_run(monkeypatch):
    """``tcplab.kernel.run``, checking afterwards that the run left no namespace behind."""
    reason = kernel_engine_skip_reason()
    if reason:
        pytest.skip(reason)
    from tcplab import kernel
    from tcplab.kernel import engine

    # Other runs may share the machine: watch only the namespaces of this test's run ids.
    ids: list[str] = []
    new_id = engine.new_run_id

    def recording() -> str:
        ids.append(new_id())
        return ids[-1]

    monkeypatch.setattr(engine, "new_run_id", recording)
    yield kernel.run
    # Whatever happened (a failed assertion included), nothing of ours is left behind.
    assert ids
    assert not {n for n in _tl_namespaces() for i in ids if n.startswith(f"tl-{i}-")}


def kernel_srtt_of_window_limited_reno(kernel_run, doc: dict) -> dict[int, float]:
    """Run *doc* on the kernel with one Reno flow limited by a 20 KB window (so its smoothed
    RTT is the path's RTT, not a queue's) and return its srtt series by time, ns."""
    from tcplab import engines
    from tcplab.scenario import load

    d = dict(doc, flow=[{"name": "t", "cca": "reno", "window": "20KB"}])
    raw = kernel_run(load(d, catalog=engines.catalog("kernel")).config(1))
    assert raw["valid"], raw["invalid_reasons"]
    s = raw["series"]
    return dict(zip(s["time_ns"], s["srtt_ns"], strict=True))


def pcap_tcp_rows(path: str | Path) -> list[list[Any]]:
    """The TCP packets of a classic pcap file (Ethernet/IPv4; micro- or nanosecond timestamps, as
    tcpdump or the simulator write them) as rows ``[t_ns, sport, dport, seq, ack, flags, win,
    None, payload]``, in file order; other frames are skipped."""
    import struct

    data = Path(path).read_bytes()
    scale = 1 if struct.unpack("<I", data[:4])[0] == 0xA1B23C4D else 1_000
    rows: list[list[Any]] = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off : off + 16])
        frame = data[off + 16 : off + 16 + incl]
        off += 16 + incl
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
            continue
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        sp, dp, seq, ack, doff, flags, win = struct.unpack(">HHIIBBH", ip[ihl : ihl + 16])
        rows.append([sec * 10**9 + frac * scale, sp, dp, seq, ack, flags, win, None,
                     total - ihl - (doff >> 4) * 4])  # fmt: skip
    return rows
