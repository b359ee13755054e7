"""End to end with the real simulator (tcplab._core); skipped when it is not built."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import tcplab
from conftest import ROOT, needs_core
from tcplab.bench import BENCHMARKS, bench_scenario

pytestmark = needs_core

SUMMARY_KEYS = {
    "valid",
    "invalid_reasons",
    "tcplab_version",
    "name",
    "description",
    "file",
    "engine",
    "trials",
    "seed",
    "seeds",
    "duration_s",
    "interval_s",
    "flows",
    "groups",
    "aggregate",
    "bottleneck",
    "sim_packets",
    "sim_packets_trials",
    "events",
    "wall_seconds",
    "scenario",
}
FLOW_KEYS = {
    "group",
    "kind",
    "src",
    "dst",
    "direction",
    "cca",
    "base_rtt_ms",
    "goodput_bps",
    "goodput_bps_trials",
    "bytes_delivered",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "dupacks",
    "loss_rate",
    "completion_s",
}
STATS = {"mean", "min", "max", "sd"}


def cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def no_wall(s):
    return {k: v for k, v in s.items() if k != "wall_seconds"}


def test_cli_run_quickstart_writes_documented_files(tmp_path):
    out = tmp_path / "tmp"
    p = cli(
        "run", str(ROOT / "scenarios/quickstart.toml"), "--out", str(out), "--set", "duration=5s"
    )
    assert p.returncode == 0, p.stderr
    assert "cubic" in p.stdout and "results:" in p.stdout
    names = sorted(f.name for f in out.iterdir())
    assert names == [
        "cwnd.png",
        "goodput.png",
        "queues.parquet",
        "scenario.toml",
        "summary.json",
        "timeseries.parquet",
    ]
    s = json.loads((out / "summary.json").read_text())
    assert set(s) == SUMMARY_KEYS
    assert set(s["flows"]["cubic"]) >= FLOW_KEYS
    assert set(s["flows"]["cubic"]["goodput_bps"]) == STATS
    assert set(s["bottleneck"]) == {"forward", "reverse"}
    g = s["flows"]["cubic"]["goodput_bps"]["mean"]
    assert 50e6 < g < 100e6  # one flow on 100 Mbit/s: most of the link, never more
    util = s["bottleneck"]["forward"]["utilization"]["mean"]
    assert 0.5 < util <= 1.0
    assert s["sim_packets"] > 0
    ts = pd.read_parquet(out / "timeseries.parquet")
    assert list(ts.columns[:4]) == ["trial", "flow", "group", "time_s"]
    assert set(ts["flow"]) == {"cubic"}
    assert ts["time_s"].max() == pytest.approx(5.0)
    assert (ts["srtt_ms"].dropna() >= 50).all()  # never below the base RTT
    q = pd.read_parquet(out / "queues.parquet")
    assert set(q["link"]) == {"bottleneck"}


def test_invalid_scenario_exits_2_with_message(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[path]\nrate = "100Mbit"\n[[flow]]\ncca = "cubci"\n')
    p = cli("run", str(bad), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert f"{bad}: flow.0.cca = 'cubci': unknown congestion control" in p.stderr
    assert "did you mean 'cubic'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()
    p = cli("validate", str(ROOT / "scenarios/quickstart.toml"), "--set", "path.rate=fast")
    assert p.returncode == 2 and "path.rate = 'fast'" in p.stderr


def test_validate_and_list():
    p = cli("validate", str(ROOT / "scenarios/udp-cross.toml"))
    assert p.returncode == 0 and p.stdout.startswith("ok: ")
    p = cli("list", "ccas")
    assert p.returncode == 0 and "cubic" in p.stdout
    p = cli("list", "knobs")
    assert p.returncode == 0 and "min_rto" in p.stdout


def test_knob_and_cca_lists_from_core():
    from tcplab.catalog import default_catalog

    cat = default_catalog()
    for name in ("mss", "initial_window", "sndbuf", "rcvbuf", "min_rto", "sack", "timestamps"):
        assert name in cat.knobs
    assert cat.knobs["min_rto"].kind == "duration"
    assert cat.knobs["initial_window"].kind == "iw"
    assert {"cubic", "reno"} <= set(cat.ccas)
    hystart = cat.ccas["cubic"].params["hystart"]
    assert hystart.kind == "choice" and "off" in hystart.choices
    assert cat.ccas["cubic"].params["beta"].kind == "float"
    # a choice listing "off" takes booleans; the engine accepts the converted config
    res = tcplab.run(
        ROOT / "scenarios/quickstart.toml",
        overrides=["duration=2s", "flow.0.cca.hystart=false", "flow.0.cca.beta=0.8"],
    )
    assert res.configs[0]["flows"][0]["cca"] == {
        "name": "cubic",
        "params": {"hystart": "off", "beta": 0.8},
    }


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_are_accepted_by_the_engine(path):
    # one trial of each, to check the engine accepts every config the scenarios produce
    res = tcplab.run(path, trials=1)
    assert res.summary["sim_packets"] > 0
    for name, f in res.summary["flows"].items():
        assert f["bytes_delivered"]["mean"] > 0, name


def test_same_seed_is_deterministic_and_another_seed_differs(tmp_path):
    scen = ROOT / "scenarios/random-loss.toml"
    args = {"trials": 2, "overrides": ["duration=10s"]}
    a = tcplab.run(scen, out=tmp_path / "a", **args)
    b = tcplab.run(scen, out=tmp_path / "b", **args)
    assert no_wall(a.summary) == no_wall(b.summary)
    for f in ("timeseries.parquet", "queues.parquet"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)
    c = tcplab.run(scen, seed=2, **args)
    assert c.summary["seeds"] != a.summary["seeds"]
    assert (
        c.summary["flows"]["reno"]["goodput_bps_trials"]
        != a.summary["flows"]["reno"]["goodput_bps_trials"]
    )
    # the two trials of one run use different loss patterns
    assert len(set(a.summary["flows"]["reno"]["goodput_bps_trials"])) == 2


def test_parallel_trials_equal_sequential():
    scen = ROOT / "scenarios/random-loss.toml"
    par = tcplab.run(scen, trials=4, jobs=4, overrides=["duration=10s"])
    seq = tcplab.run(scen, trials=4, jobs=1, overrides=["duration=10s"])
    assert no_wall(par.summary) == no_wall(seq.summary)
    pd.testing.assert_frame_equal(par.timeseries, seq.timeseries)
    pd.testing.assert_frame_equal(par.queues, seq.queues)


def test_resolved_scenario_reproduces_the_run(tmp_path):
    a = tcplab.run(
        ROOT / "scenarios/random-loss.toml",
        trials=2,
        overrides=["duration=5s", "path.rate=5Mbit"],
        out=tmp_path / "a",
    )
    b = tcplab.run(tmp_path / "a" / "scenario.toml")
    sa, sb = no_wall(a.summary), no_wall(b.summary)
    sa.pop("file"), sb.pop("file")
    assert sa == sb


def test_bench_scenarios_validate_and_json_keys():
    for b in BENCHMARKS.values():
        sc = tcplab.load(bench_scenario(b))
        assert len(sc.flows) == b.flows
        assert [f.start_ns for f in sc.flows] == [i * 10_000_000 for i in range(b.flows)]
    p = cli("bench", "--json", "--only", "s1")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert set(row) == {"name", "sim_seconds", "wall_seconds", "data_packets", "packets_per_second"}
    assert row["name"] == "s1" and row["sim_seconds"] == 60 and row["data_packets"] > 0
