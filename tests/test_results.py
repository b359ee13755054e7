"""Summary maths, tables and atomic output, on synthetic raw results (no Rust core needed)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcplab.plots
from conftest import FAKE_CATALOG, synthetic_engine
from tcplab.errors import OutputError
from tcplab.results import Result, check_out, jain_index, stats
from tcplab.scenario import load
from tcplab.seeds import trial_seeds


def test_jain_index_equal_and_unequal():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0]) == pytest.approx(0.5)  # one of two gets everything: 1/n
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain_index([3.0, 1.0]) == pytest.approx(16 / 20)  # (3+1)^2 / (2 * (9+1))
    # Zhou & Yan's 25 ms row: 21.722 vs 22.948 Mbit/s -> 0.9992 (published)
    assert jain_index([21.722, 22.948]) == pytest.approx(0.9992, abs=5e-5)
    assert jain_index([]) is None
    assert jain_index([0.0, 0.0]) is None


def test_stats_sample_sd():
    xs = [1220.0, 1296.0, 1375.0, 1301.0]
    s = stats(xs)
    assert s["mean"] == pytest.approx(statistics.mean(xs))
    assert s["sd"] == pytest.approx(statistics.stdev(xs))  # n - 1
    assert (s["min"], s["max"]) == (1220.0, 1375.0)
    assert stats([7.0]) == {"mean": 7.0, "min": 7.0, "max": 7.0, "sd": 0.0}
    assert stats([]) is None


def make(doc, trials=3, engine=synthetic_engine, seed=1):
    sc = load(doc, catalog=FAKE_CATALOG, trials=trials, seed=seed)
    seeds = trial_seeds(sc.seed, sc.trials)
    configs = [sc.config(s) for s in seeds]
    raws = [engine(c) for c in configs]
    return sc, configs, raws, Result(sc, seeds, configs, raws, 1.25, "test")


DOC = {
    "name": "syn",
    "duration": "10s",
    "path": {"rate": "100Mbit", "rtt": "50ms"},
    "flow": [
        {"name": "bulk", "streams": 2},
        {"name": "solo", "cca": "reno", "start": "2s"},
        {"name": "u", "kind": "udp", "rate": "10Mbit", "start": "1s", "stop": "5s"},
    ],
}


def test_summary_flows_groups_and_aggregate():
    sc, configs, raws, res = make(DOC, trials=3)
    s = res.summary
    assert s["trials"] == 3 and s["seeds"] == trial_seeds(1, 3)
    assert list(s["flows"]) == ["bulk.0", "bulk.1", "solo", "u"]
    assert list(s["groups"]) == ["bulk", "solo", "u"]

    def goodput(k, name):
        rf = next(f for f in raws[k]["flows"] if f["name"] == name)
        cf = next(f for f in configs[k]["flows"] if f["name"] == name)
        return 8e9 * rf["bytes_delivered"] / (cf["stop_ns"] - cf["start_ns"])

    for name in ("bulk.0", "solo", "u"):
        per = [goodput(k, name) for k in range(3)]
        g = s["flows"][name]["goodput_bps"]
        assert g["mean"] == pytest.approx(statistics.mean(per))
        assert g["sd"] == pytest.approx(statistics.stdev(per))
        assert g["min"] == min(per) and g["max"] == max(per)
        assert s["flows"][name]["goodput_bps_trials"] == pytest.approx(per)
    # a group's goodput is the per-trial sum over its streams
    bulk = [goodput(k, "bulk.0") + goodput(k, "bulk.1") for k in range(3)]
    assert s["groups"]["bulk"]["goodput_bps"]["mean"] == pytest.approx(statistics.mean(bulk))
    assert s["groups"]["bulk"]["flows"] == ["bulk.0", "bulk.1"]
    retx = [
        sum(f["retransmits"] for f in raws[k]["flows"] if f["group"] == "bulk") for k in range(3)
    ]
    assert s["groups"]["bulk"]["retransmits"]["mean"] == pytest.approx(statistics.mean(retx))
    # loss rate = retransmitted / sent segments
    solo = [next(f for f in raws[k]["flows"] if f["name"] == "solo") for k in range(3)]
    lr = [f["retransmits"] / f["segments_sent"] for f in solo]
    assert s["flows"]["solo"]["loss_rate"]["mean"] == pytest.approx(statistics.mean(lr))
    # UDP: no TCP counters; loss from sent/received
    assert s["flows"]["u"]["retransmits"] is None and s["flows"]["u"]["timeouts"] is None
    u = [next(f for f in raws[k]["flows"] if f["name"] == "u") for k in range(3)]
    ulr = [(f["udp_sent"] - f["udp_received"]) / f["udp_sent"] for f in u]
    assert s["flows"]["u"]["loss_rate"]["mean"] == pytest.approx(statistics.mean(ulr))
    # aggregate = all bytes / duration
    agg = [8 * sum(f["bytes_delivered"] for f in raws[k]["flows"]) / 10 for k in range(3)]
    assert s["aggregate"]["goodput_bps"]["mean"] == pytest.approx(statistics.mean(agg))
    # Jain over TCP groups' means, and per trial
    means = [s["groups"][g]["goodput_bps"]["mean"] for g in ("bulk", "solo")]
    assert s["aggregate"]["jain_groups"] == ["bulk", "solo"]
    assert s["aggregate"]["jain_index"] == pytest.approx(
        sum(means) ** 2 / (2 * sum(m * m for m in means))
    )
    per_trial = [
        jain_index([s["groups"][g]["goodput_bps_trials"][k] for g in ("bulk", "solo")])
        for k in range(3)
    ]
    assert s["aggregate"]["jain_index_trials"]["mean"] == pytest.approx(statistics.mean(per_trial))
    # bottleneck utilisation per direction = busy / end
    util = [
        next(x for x in raws[k]["links"] if x["name"] == "bottleneck" and x["dir"] == "ba")[
            "busy_ns"
        ]
        / 10e9
        for k in range(3)
    ]
    assert s["bottleneck"]["reverse"]["utilization"]["mean"] == pytest.approx(statistics.mean(util))
    assert s["sim_packets"] == sum(r["sim_packets"] for r in raws)
    assert s["sim_packets_trials"] == [r["sim_packets"] for r in raws]
    assert s["wall_seconds"] == 1.25 and s["tcplab_version"] == "test"
    assert s["scenario"] == sc.resolved
    assert s["flows"]["bulk.0"]["completion_s"] is None
    json.dumps(s, allow_nan=False)


def test_single_trial_sd_is_zero():
    *_, res = make(DOC, trials=1)
    assert res.summary["flows"]["solo"]["goodput_bps"]["sd"] == 0.0


def test_sized_transfer_completion():
    doc = {
        "path": {"rate": "100Mbit", "rtt": "50ms"},
        "duration": "10s",
        "flow": [{"name": "x", "bytes": "1MB", "start": "1s", "streams": 2}],
    }

    def engine(cfg):
        raw = synthetic_engine(cfg)
        for k, f in enumerate(raw["flows"]):
            f["bytes_delivered"] = 1_000_000
            # stream 1 of trial seed-dependent runs does not finish in odd trials
            f["completion_ns"] = None if (k == 1 and cfg["seed"] % 2) else 1_500_000_000 + k
        return raw

    _, configs, _, res = make(doc, trials=4, engine=engine)
    s = res.summary["flows"]["x.0"]
    assert s["completed_trials"] == 4
    assert s["completion_s"]["mean"] == pytest.approx(0.5)
    assert s["goodput_bps"]["mean"] == pytest.approx(8e6 / 0.5)
    odd = sum(c["seed"] % 2 for c in configs)
    assert res.summary["flows"]["x.1"]["completed_trials"] == 4 - odd
    assert res.summary["groups"]["x"]["completed_trials"] == 4 - odd


def test_timeseries_frame_units_and_columns():
    _, _, raws, res = make(DOC, trials=2)
    ts = res.timeseries
    assert list(ts.columns[:4]) == ["trial", "flow", "group", "time_s"]
    for c in ("srtt_ms", "rttvar_ms", "rto_ms", "goodput_bps", "cwnd_bytes", "snd_nxt"):
        assert c in ts.columns
    assert not any(c.endswith("_ns") for c in ts.columns)
    assert len(ts) == sum(len(r["series"]["flow"]) for r in raws)
    row = ts[(ts.trial == 1) & (ts.flow == "solo")].iloc[0]
    raw = raws[1]["series"]
    i = raw["flow"].index("solo")
    assert row["time_s"] == raw["time_ns"][i] / 1e9
    assert row["srtt_ms"] == raw["srtt_ns"][i] / 1e6
    assert row["group"] == "solo"
    assert ts[ts.flow == "bulk.1"]["group"].unique().tolist() == ["bulk"]
    assert ts[ts.flow == "u"]["cwnd_bytes"].isna().all()
    q = res.queues
    assert list(q.columns) == [
        "trial",
        "link",
        "dir",
        "time_s",
        "queue_pkts",
        "queue_bytes",
        "drops",
        "lost",
        "utilization",
    ]
    assert set(q["dir"]) == {"ab", "ba"} and set(q["trial"]) == {0, 1}
    assert res.changes is None


def test_write_produces_documented_files(tmp_path):
    *_, res = make(DOC, trials=2)
    out = res.write(tmp_path / "runs" / "x")
    assert sorted(p.name for p in out.iterdir()) == [
        "cwnd.png",
        "goodput.png",
        "queues.parquet",
        "scenario.toml",
        "summary.json",
        "timeseries.parquet",
    ]
    assert json.loads((out / "summary.json").read_text()) == res.summary
    pd.testing.assert_frame_equal(pd.read_parquet(out / "timeseries.parquet"), res.timeseries)
    assert (out / "goodput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert load(out / "scenario.toml", catalog=FAKE_CATALOG).config(3) == res.scenario.config(3)
    assert not [p for p in (tmp_path / "runs").iterdir() if p.name.startswith(".")]


def test_refuses_non_empty_output(tmp_path):
    *_, res = make(DOC, trials=1)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    with pytest.raises(OutputError, match="not empty"):
        res.write(tmp_path / "full")
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        check_out(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert res.write(tmp_path / "empty") == (tmp_path / "empty").absolute()
    assert (tmp_path / "empty" / "summary.json").exists()


def test_failure_mid_write_leaves_nothing(tmp_path, monkeypatch):
    *_, res = make(DOC, trials=1)

    def boom(result, d: Path):
        (d / "goodput.png").write_bytes(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(tcplab.plots, "write_plots", boom)
    target = tmp_path / "a" / "b" / "run"
    with pytest.raises(RuntimeError, match="disk full"):
        res.write(target)
    assert list(tmp_path.iterdir()) == []  # not even the parents a/ and a/b/


def test_write_atomic_rename_failure_cleans_up(tmp_path, monkeypatch):
    import tcplab.results as r

    def fill(d: Path):
        (d / "x").write_text("1")
        # someone else creates the target meanwhile
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "y").write_text("2")

    with pytest.raises(OutputError, match="cannot move"):
        r.write_atomic(tmp_path / "out", fill)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["y"]


def _reference_frames(tables, columns, names=None, groups=None):
    """The definition _frames must equal: one _frame per trial, concatenated."""
    from tcplab.results import _frame

    frames = []
    for k, t in enumerate(tables):
        df = _frame(t, columns, k, names[k] if names else ())
        if groups is not None:
            df.insert(2, "group", df["flow"].map(groups[k]))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


@settings(max_examples=150, deadline=None)
@given(
    n_trials=st.integers(1, 4),
    rows=st.lists(st.integers(0, 4), min_size=4, max_size=4),
    kinds=st.lists(st.sampled_from(["int", "float", "none", "mixed"]), min_size=3),
    missing=st.booleans(),
    extra=st.booleans(),
    data=st.data(),
)
def test_one_pass_frames_equal_per_trial_concatenation(n_trials, rows, kinds, missing, extra, data):
    from tcplab.results import _frames

    columns = ("flow", "time_ns", "a", "b", "c")
    names = [["x", "y"] for _ in range(n_trials)]
    groups = [{"x": "g1", "y": "g2"} for _ in range(n_trials)]
    tables = []
    for k in range(n_trials):
        n = rows[k]
        t = {"flow": [i % 2 for i in range(n)], "time_ns": list(range(n))}
        for col, kind in zip(("a", "b", "c"), kinds, strict=False):
            if missing and col == "c":
                continue
            pick = {
                "int": st.integers(-5, 5),
                "float": st.floats(-1e3, 1e3),
                "none": st.one_of(st.none(), st.floats(0, 1)),
                "mixed": st.one_of(st.integers(0, 9), st.floats(0, 1)),
            }[kind]
            t[col] = data.draw(st.lists(pick, min_size=n, max_size=n))
        if extra:
            t["zz"] = list(range(n))
        tables.append(t)
    fast = _frames(tables, columns, names=names, groups=groups)
    ref = _reference_frames(tables, columns, names=names, groups=groups)
    pd.testing.assert_frame_equal(fast, ref, check_dtype=True)
    assert list(fast.columns) == list(ref.columns)


def test_one_pass_frames_take_the_fast_path(monkeypatch):
    import tcplab.results as res

    tables = [{"flow": [0, 1], "time_ns": [1, 2], "a": [1.5, None]} for _ in range(3)]
    monkeypatch.setattr(res, "_frame", lambda *a, **k: pytest.fail("per-trial path taken"))
    df = res._frames(tables, ("flow", "time_ns", "a"), names=[["x", "y"]] * 3)
    assert list(df["trial"]) == [0, 0, 1, 1, 2, 2] and list(df["flow"]) == ["x", "y"] * 3


def test_summary_lists_the_kernel_attempts_discarded_as_invalid():
    sc, configs, raws, res = make(DOC, trials=2)
    assert "discarded_attempts" not in res.summary  # nothing discarded: the key is absent
    raws[1]["kernel"] = {"discarded_attempts": [["link bn ab: late"], ["socket drops"]]}
    s = Result(sc, res.seeds, configs, raws, 1.0, "test").summary
    assert s["discarded_attempts"] == [
        "trial 1 attempt 1: link bn ab: late",
        "trial 1 attempt 2: socket drops",
    ]
    assert s["valid"]  # the kept attempt decides validity
