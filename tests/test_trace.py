"""``tcplab trace``: analysis results, outputs (table, JSON, CSV, graphs), errors, determinism,
and a capture of two million packets streamed through the analyzer."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import trace_cases
from conftest import needs_core

pytestmark = needs_core


def write(tmp_path: Path, name: str, packets: list[dict[str, Any]], **kw: Any) -> Path:
    from tcplab import _core

    p = tmp_path / name
    _core.write_tcp_capture(str(p), packets, **kw)
    return p


def synth(tmp_path: Path, name: str = "bulk.pcap", **kw: Any) -> Path:
    from tcplab import _core

    p = tmp_path / name
    _core.synth_bulk_capture(str(p), **kw)
    return p


def run_cli(*argv: str) -> int:
    from tcplab import trace

    return trace.main(list(argv))


# ---------------------------------------------------------------------------------------------
# Analysis


def test_synthetic_transfer_counts(tmp_path: Path) -> None:
    from tcplab import trace

    rep = trace.analyze(synth(tmp_path, segments=2000, loss_every=50))
    assert rep["format"] == "pcap-ns"
    (c,) = rep["connections"]
    assert c["complete"] and not c["reset"]
    a2b, b2a = c["a2b"], c["b2a"]
    assert a2b["unique_bytes"] == 2000 * 1448
    assert (a2b["rexmt_pkts"], a2b["rexmt_bytes"]) == (40, 40 * 1448)
    assert a2b["data_pkts"] == 2040
    assert (a2b["mss"], a2b["window_scale"], a2b["sack_permitted"]) == (1448, 7, True)
    assert a2b["rtt_min_ms"] == pytest.approx(20.0) and a2b["rtt_max_ms"] == pytest.approx(20.0)
    assert b2a["sack_pkts"] > 0 and b2a["invalid_sack_blocks"] == 0
    assert a2b["throughput_bps"] == pytest.approx(8 * a2b["unique_bytes"] / c["duration_s"])


def test_j4_anomalies_detected(tmp_path: Path) -> None:
    """Seed experiment J4: data beyond the advertised window while SACKs arrive, and SACK
    blocks that cannot be valid, each counted."""
    from tcplab import trace

    rep = trace.analyze(write(tmp_path, "j4.pcap", trace_cases.anomalies()))
    c = rep["connections"][0]
    a2b, b2a = c["a2b"], c["b2a"]
    assert a2b["window_checked"]
    assert (a2b["window_violations"], a2b["window_violation_bytes"]) == (2, 2000)
    assert b2a["invalid_sack_blocks"] == 3
    assert b2a["invalid_sack_reversed"] == 1
    assert b2a["invalid_sack_below_ack"] == 1
    assert b2a["invalid_sack_beyond_sent"] == 1
    assert b2a["sack_pkts"] == 5 and b2a["sack_blocks"] == 6


def test_zero_window_probes_counted(tmp_path: Path) -> None:
    from tcplab import trace

    rep = trace.analyze(write(tmp_path, "zw.pcap", trace_cases.window_scaling_zero_window()))
    a2b, b2a = rep["connections"][0]["a2b"], rep["connections"][0]["b2a"]
    assert (a2b["zwnd_probe_pkts"], a2b["zwnd_probe_bytes"]) == (3, 3)
    assert a2b["window_violations"] == 0, "one-byte probes into a zero window are allowed"
    assert b2a["win_zero_adv"] == 4
    assert b2a["window_scale"] == 7 and b2a["win_max"] == 200 * 128


def test_same_packets_any_container_link_and_ip_version(tmp_path: Path) -> None:
    from tcplab import trace

    packets = trace_cases.losses_and_retransmissions()
    ref = None
    for fmt in ("pcap", "pcapng"):
        for link in ("ethernet", "sll", "sll2", "raw", "null"):
            rep = trace.analyze(write(tmp_path, f"x-{link}.{fmt}", packets, format=fmt, link=link))
            stats = [{k: v for k, v in c["a2b"].items()} for c in rep["connections"]]
            if ref is None:
                ref = stats
            assert stats == ref, (fmt, link)
    v6 = [
        dict(
            p, src=p["src"].replace("10.0.0.", "fd00::"), dst=p["dst"].replace("10.0.0.", "fd00::")
        )
        for p in packets
    ]
    rep6 = trace.analyze(write(tmp_path, "v6.pcap", v6))
    assert rep6["connections"][0]["a"].startswith("[fd00::1]")
    assert [c["a2b"] for c in rep6["connections"]] == ref


def test_graph_series_time_window(tmp_path: Path) -> None:
    from tcplab import trace

    p = synth(tmp_path, segments=3000, loss_every=100)
    full = trace.analyze(p, graphs=True)
    part = trace.analyze(p, 0.1, 0.2, graphs=True)
    fs, ps = full["connections"][0]["a2b"]["series"], part["connections"][0]["a2b"]["series"]
    assert len(fs["seg_t"]) == full["connections"][0]["a2b"]["data_pkts"] + 2  # + SYN, FIN
    assert ps["seg_t"] and all(0.1 <= t <= 0.2 for t in ps["seg_t"])
    assert all(0.1 <= t <= 0.2 for t in ps["ack_t"] + ps["rtt_t"] + ps["out_t"])
    assert len(ps["seg_t"]) < len(fs["seg_t"]) / 3
    names = full["seg_kind_names"]
    retx = [k for k in fs["seg_kind"] if names[k] == "retransmission"]
    assert len(retx) == full["connections"][0]["a2b"]["rexmt_pkts"]
    # Statistics do not depend on the window.
    strip = {k: v for k, v in part["connections"][0]["a2b"].items() if k != "series"}
    assert strip == {k: v for k, v in full["connections"][0]["a2b"].items() if k != "series"}
    # Sequence numbers are relative: the SYN at 0, the last byte + FIN at the end.
    assert fs["seg_start"][0] == 0 and fs["seg_end"][-1] == 3000 * 1448 + 2


# ---------------------------------------------------------------------------------------------
# Command line and outputs


def test_cli_table_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "basic.pcap", trace_cases.basic_transfer())
    assert run_cli(str(p)) == 0
    out = capsys.readouterr().out
    assert "conn 0: 10.0.0.1:40000 <-> 10.0.0.2:5001  (complete" in out
    assert "unique bytes" in out and "21,000" in out
    assert "RTT ms min/avg/max/sd" in out


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "basic.pcap", trace_cases.basic_transfer())
    assert run_cli(str(p), "--json") == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["connections"][0]["a2b"]["unique_bytes"] == 21000
    assert "series" not in rep["connections"][0]["a2b"]


def test_cli_out_dir_json_csv_graphs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "many.pcap", trace_cases.many_connections())
    out = tmp_path / "res"
    assert run_cli(str(p), "--out", str(out), "--graphs", "png,svg") == 0
    assert f"results: {out}" in capsys.readouterr().out
    rep = json.loads((out / "report.json").read_text())
    assert len(rep["connections"]) == 5
    with open(out / "connections.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 2 * 5
    assert table[0]["dir"] == "a2b" and table[1]["dir"] == "b2a"
    assert {r["conn"] for r in table} == {"0", "1", "2", "3", "4"}
    row = next(r for r in table if r["conn"] == "0" and r["dir"] == "a2b")
    assert int(row["unique_bytes"]) == rep["connections"][0]["a2b"]["unique_bytes"]
    graphs = sorted(x.name for x in (out / "graphs").iterdir())
    for kind in ("tsg", "throughput", "rtt", "outstanding"):
        assert f"conn0_a2b_{kind}.png" in graphs and f"conn0_a2b_{kind}.svg" in graphs
    assert (out / "graphs" / "conn0_a2b_tsg.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.parse(out / "graphs" / "conn0_a2b_tsg.svg")  # well-formed SVG
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".res.tmp")]


def test_cli_graph_selection_and_none(tmp_path: Path) -> None:
    p = write(tmp_path, "many.pcap", trace_cases.many_connections())
    assert run_cli(str(p), "--out", str(tmp_path / "a"), "--conn", "1") == 0
    names = {x.name.split("_")[0] for x in (tmp_path / "a" / "graphs").iterdir()}
    assert names == {"conn1"}
    assert run_cli(str(p), "--out", str(tmp_path / "b"), "--graphs", "none") == 0
    assert not (tmp_path / "b" / "graphs").exists()
    assert (tmp_path / "b" / "report.json").exists()


def test_cli_compare_two_captures(tmp_path: Path) -> None:
    a = synth(tmp_path, "sim.pcap", segments=800, loss_every=40)
    b = synth(tmp_path, "real.pcap", segments=800, loss_every=0, link="sll")
    out = tmp_path / "cmp"
    assert run_cli(str(a), str(b), "--out", str(out)) == 0
    graphs = {x.name for x in (out / "graphs").iterdir()}
    assert {"sim_conn0_a2b_tsg.png", "real_conn0_a2b_tsg.png"} <= graphs
    for kind in ("tsg", "throughput", "rtt", "outstanding"):
        assert f"compare_conn0_a2b_{kind}.png" in graphs
    body = json.loads((out / "report.json").read_text())
    assert [Path(c["file"]).name for c in body["captures"]] == ["sim.pcap", "real.pcap"]
    with open(out / "connections.csv", newline="") as f:
        caps = {Path(r["capture"]).name for r in csv.DictReader(f)}
    assert caps == {"sim.pcap", "real.pcap"}


def test_cli_truncated_file_exit_2_names_offset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = synth(tmp_path, segments=50, loss_every=0).read_bytes()
    bad = tmp_path / "cut.pcap"
    bad.write_bytes(good[:1000])
    out = tmp_path / "res"
    assert run_cli(str(bad), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "cut.pcap: at byte offset" in err and "truncated" in err
    offset = int(err.split("at byte offset ")[1].split(":")[0])
    assert 24 <= offset < 1000
    assert not out.exists(), "nothing half-written"
    assert not list(tmp_path.glob(".res*"))


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "file is empty"),
        (b"this is not a capture at all", "not a pcap or pcapng capture"),
        (b"\x0a\x0d\x0d\x0a\x1c\x00\x00\x00\x4d\x3c\x2b\x1a\x01\x00", "truncated"),
    ],
)
def test_cli_bad_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    p = tmp_path / "f.pcap"
    p.write_bytes(content)
    assert run_cli(str(p)) == 2
    err = capsys.readouterr().err
    assert needle in err and "at byte offset 0" in err


def test_cli_corrupt_pcapng_block_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(tmp_path, "x.pcapng", trace_cases.basic_transfer(), format="pcapng")
    b = bytearray(p.read_bytes())
    # First Enhanced Packet Block starts after SHB (28) and IDB (32): corrupt its trailer.
    epb = 60
    length = int.from_bytes(b[epb + 4 : epb + 8], "little")
    b[epb + length - 4] ^= 0x10
    p.write_bytes(bytes(b))
    assert run_cli(str(p)) == 2
    assert (
        f"at byte offset {epb}: corrupt capture: pcapng block length mismatch"
        in capsys.readouterr().err
    )


def test_cli_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "basic.pcap", trace_cases.basic_transfer())
    assert run_cli(str(tmp_path / "missing.pcap")) == 2
    assert "missing.pcap" in capsys.readouterr().err
    assert run_cli(str(p), "--out", str(tmp_path / "o1"), "--graphs", "gif") == 2
    assert "unknown format" in capsys.readouterr().err
    assert run_cli(str(p), "--out", str(tmp_path / "o2"), "--conn", "7") == 2
    assert "no connection 7" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
    assert run_cli(str(p), "--from", "2", "--to", "1") == 2
    assert "before it starts" in capsys.readouterr().err
    assert run_cli(str(p), "--from", "-1") == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert run_cli(str(p), "--out", str(tmp_path / "full")) == 2
    assert "not empty" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Determinism


def test_capture_writers_are_deterministic(tmp_path: Path) -> None:
    a = synth(tmp_path, "a.pcap", segments=500, loss_every=17)
    b = synth(tmp_path, "b.pcap", segments=500, loss_every=17)
    assert a.read_bytes() == b.read_bytes()
    pk = trace_cases.many_connections()
    for fmt in ("pcap", "pcapng"):
        x = write(tmp_path, f"x.{fmt}", pk, format=fmt)
        y = write(tmp_path, f"y.{fmt}", pk, format=fmt)
        assert x.read_bytes() == y.read_bytes()


def test_outputs_are_deterministic(tmp_path: Path) -> None:
    p = write(tmp_path, "w.pcap", trace_cases.sequence_wrap())
    for name in ("o1", "o2"):
        assert run_cli(str(p), "--out", str(tmp_path / name), "--graphs", "svg") == 0
    for f in ("report.json", "connections.csv", "graphs/conn0_a2b_tsg.svg"):
        assert (tmp_path / "o1" / f).read_bytes() == (tmp_path / "o2" / f).read_bytes(), f


def test_simulator_capture_is_deterministic_and_analysable(tmp_path: Path) -> None:
    import tcplab
    from tcplab import trace

    root = Path(__file__).resolve().parent.parent
    files = []
    for k in range(2):
        res = tcplab.run(
            root / "scenarios" / "quickstart.toml",
            trials=1,
            overrides=["duration=3s"],
            pcap=["bottleneck"],
            out=tmp_path / f"run{k}",
        )
        files.append(Path(res.captures[0]).read_bytes())
    assert files[0] == files[1], "same seed, byte-identical capture"
    cap = tmp_path / "sim.pcap"
    cap.write_bytes(files[0])
    rep = trace.analyze(cap)
    assert rep["capture"]["malformed"] == 0
    assert sum(c["a2b"]["unique_bytes"] for c in rep["connections"]) > 0


# ---------------------------------------------------------------------------------------------
# Scale


_PEAK_RSS = """
import resource, sys
from tcplab import trace
rep = trace.analyze(sys.argv[1])
print(rep["capture"]["records"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_rss_kib(path: Path) -> tuple[int, int]:
    """(records, peak resident set in KiB) of analysing *path* in a fresh interpreter."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "python"), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()
    return int(out[-2]), int(out[-1])


def test_two_million_packets_streamed(tmp_path: Path) -> None:
    """A capture of over two million packets is analysed streaming: the peak memory of a process
    analysing it is that of one analysing a tiny capture, plus little. Prints the measured rate
    (no timing assertion)."""
    from tcplab import trace

    big = synth(tmp_path, "big.pcap", segments=1_000_500, loss_every=211, snaplen=96)
    small = synth(tmp_path, "small.pcap", segments=500, loss_every=211, snaplen=96)
    size = big.stat().st_size
    t = time.perf_counter()
    rep = trace.analyze(big)
    dt = time.perf_counter() - t
    n = rep["capture"]["records"]
    print(f"\n{n:,} packets ({size / 1e6:.0f} MB) analysed in {dt:.2f} s: {n / dt:,.0f} packets/s")
    assert n > 2_000_000
    a2b = rep["connections"][0]["a2b"]
    assert a2b["unique_bytes"] == 1_000_500 * 1448
    assert a2b["rexmt_pkts"] == 1_000_500 // 211
    n_big, rss_big = _peak_rss_kib(big)
    n_small, rss_small = _peak_rss_kib(small)
    assert n_big == n and 0 < n_small < 2000
    grown_mib = (rss_big - rss_small) / 1024
    print(f"peak RSS {rss_big / 1024:.0f} MiB vs {rss_small / 1024:.0f} MiB for a tiny capture")
    assert grown_mib < 32, f"memory grew by {grown_mib:.0f} MiB for a {size / 2**20:.0f} MiB file"
