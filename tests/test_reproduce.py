"""tcplab reproduce: the [report] spec, tables, published-vs-ours comparisons, checks, the study
scenario library, and an end-to-end quick run of one study."""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib

import pandas as pd
import pytest

import tcplab.engines
from conftest import ROOT, needs_core, synthetic_engine
from tcplab import sweep
from tcplab.cli import main
from tcplab.errors import ScenarioError
from tcplab.reproduce import STUDIES, metrics, spec, tables

STUDIES_DIR = ROOT / "scenarios" / "studies"

# ---------------------------------------------------------------------------------------------
# The [report] spec

REPORT = {
    "id": "X1",
    "title": "t",
    "metric": {"g": {"kind": "goodput", "group": "a", "unit": "kbps"}},
    "table": [{"keys": ["stack"], "metric": "g", "stats": ["min", "mean", "sd"]}],
    "published": [
        {
            "role": "independent",
            "columns": ["mean_kbps"],
            "rows": [["x", 1.0], ["y", 2.0]],
            "order": [{"column": "mean_kbps"}],
        }
    ],
    "check": [
        {"role": "independent", "claim": "c", "kind": "top", "column": "mean_kbps", "expect": ["x"]}
    ],
}


def parse(report, dims=("stack",)):
    return spec.parse_report({"report": report}, "f.toml", list(dims))


def test_report_shorthand_columns_are_named_by_statistic_and_unit():
    r = parse(REPORT)
    assert r.id == "X1"
    assert [c["name"] for c in r.tables[0]["columns"]] == ["min_kbps", "mean_kbps", "sd_kbps"]
    assert r.published[0]["keys"] == ["stack"]
    assert r.published[0]["tolerance"] == 0.2


@pytest.mark.parametrize(
    ("mutate", "field", "text"),
    [
        (lambda r: r.update(idd="X"), "report.idd", "did you mean 'id'"),
        (lambda r: r.update(id="x1"), "report.id", "experiment ID"),
        (lambda r: r["metric"]["g"].update(kind="goodputt"), "report.metric.g.kind", "goodput"),
        (lambda r: r["metric"]["g"].update(unit="furlongs"), "report.metric.g.unit", "unknown"),
        (lambda r: r["table"][0].update(keys=["os"]), "report.table.0.keys", "not a sweep"),
        (lambda r: r["table"][0].update(stats=["avg"]), "report.table.0.stats", "avg"),
        (lambda r: r["table"][0].update(metric="h"), "report.table.0.metric", "metric"),
        (
            lambda r: r["published"][0].update(columns=["mean_mbps"]),
            "report.published.0.columns",
            "not a column of our table",
        ),
        (
            lambda r: r["published"][0].update(rows=[["x", 1.0, 2.0]]),
            "report.published.0.rows.0",
            "1 key(s) then 1 value(s)",
        ),
        (
            lambda r: r["published"][0].update(table="nope"),
            "report.published.0.table",
            "suffix",
        ),
        (lambda r: r["check"][0].update(kind="max"), "report.check.0.kind", "unknown check"),
        (lambda r: r["check"][0].update(column="x"), "report.check.0.column", "not a column"),
        (lambda r: r.pop("table"), "report.table", "at least one table"),
    ],
)
def test_report_errors_name_the_field(mutate, field, text):
    r = copy.deepcopy(REPORT)
    mutate(r)
    with pytest.raises(ScenarioError) as e:
        parse(r)
    assert e.value.field == field
    assert text in str(e.value)
    assert str(e.value).startswith("f.toml: ")


# ---------------------------------------------------------------------------------------------
# Statistics and metrics


def test_statistics():
    xs = [1.0, 2.0, 3.0, 4.0, float("nan")]
    assert metrics.statistic(xs, "mean") == 2.5
    assert metrics.statistic(xs, "sd") == pytest.approx(math.sqrt(5 / 3))
    assert metrics.statistic(xs, "min") == 1.0 and metrics.statistic(xs, "max") == 4.0
    assert metrics.statistic(xs, "median") == 2.5
    assert metrics.statistic(xs, "n") == 4
    assert metrics.statistic(xs, "count>=3") == 2
    assert metrics.statistic(xs, "count<2") == 1
    assert metrics.statistic([5.0], "sd") == 0.0
    assert math.isnan(metrics.statistic([], "mean"))
    assert metrics.valid_stat("count>=800") and not metrics.valid_stat("avg")


@pytest.fixture
def fake(monkeypatch, fake_catalog):
    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: synthetic_engine)
    return fake_catalog


DOC = {
    "name": "t",
    "duration": "10s",
    "trials": 3,
    "path": {"rate": "10Mbit", "rtt": "20ms"},
    "flow": [{"name": "a"}, {"name": "b", "streams": 2}],
    "sweep": {
        "zip": {
            "name": "pair",
            "coords": {"c1": ["x", "x", "y"], "c2": ["x", "y", "y"]},
            "path.rate": ["10Mbit", "20Mbit", "30Mbit"],
        }
    },
}


def test_build_table_matches_the_summaries_and_mirrors_pairs(fake):
    loaded = sweep.load_points(DOC)
    res = sweep.run_sweep(loaded)
    mets = {
        "a": {"kind": "goodput", "group": "a", "unit": "kbps"},
        "b": {"kind": "goodput", "group": "b", "unit": "kbps"},
        "j": {"kind": "jain"},
        "jf": {"kind": "jain", "per": "flow"},
        "agg": {"kind": "aggregate", "unit": "mbps"},
        "win": {"kind": "goodput", "group": "a", "t0": 2, "t1": "100%", "unit": "bps"},
    }
    table = {
        "suffix": "",
        "keys": ["c1", "c2"],
        "columns": [
            {"name": "c1_kbps", "metric": "a", "stat": "mean"},
            {"name": "c2_kbps", "metric": "b", "stat": "mean"},
            {"name": "sd_kbps", "metric": "a", "stat": "sd"},
            {"name": "jain", "metric": "j", "stat": "mean"},
            {"name": "jain_flows", "metric": "jf", "stat": "mean"},
            {"name": "total_mbps", "metric": "agg", "stat": "mean"},
            {"name": "late_bps", "metric": "win", "stat": "mean"},
        ],
        "mirror": {"keys": ["c1", "c2"], "columns": [["c1_kbps", "c2_kbps"]]},
    }
    pts = [(p.coords, r) for p, r in zip(res.points, res.results, strict=True)]
    df = tables.build_table(table, mets, pts)
    assert list(df.columns[:2]) == ["c1", "c2"]
    assert [tuple(r) for r in df[["c1", "c2"]].to_numpy()] == [
        ("x", "x"),
        ("x", "y"),
        ("y", "y"),
        ("y", "x"),
    ]
    s0 = res.results[0].summary
    assert df["c1_kbps"][0] == pytest.approx(s0["groups"]["a"]["goodput_bps"]["mean"] / 1e3)
    assert df["sd_kbps"][0] == pytest.approx(s0["groups"]["a"]["goodput_bps"]["sd"] / 1e3)
    assert df["c2_kbps"][0] == pytest.approx(s0["groups"]["b"]["goodput_bps"]["mean"] / 1e3)
    ga = s0["groups"]["a"]["goodput_bps_trials"]
    gb = s0["groups"]["b"]["goodput_bps_trials"]
    jain = [(x + y) ** 2 / (2 * (x * x + y * y)) for x, y in zip(ga, gb, strict=True)]
    assert df["jain"][0] == pytest.approx(sum(jain) / 3)
    assert df["total_mbps"][0] == pytest.approx(sum(ga + gb) / 3 / 1e6)
    assert 0 < df["jain_flows"][0] <= 1
    # The windowed goodput is the delivered bytes of the series between 2 s and the end.
    ts = res.results[0].timeseries
    a0 = ts[(ts["trial"] == 0) & (ts["flow"] == "a")].set_index("time_s")["delivered_bytes"]
    first = 8 * (a0[10.0] - a0[2.0]) / 8.0
    got = metrics.evaluate(res.results[0], mets["win"])[0]
    assert got == pytest.approx(first)
    # The mirrored row swaps the keys and the paired columns.
    assert df["c1_kbps"][3] == df["c2_kbps"][1] and df["c2_kbps"][3] == df["c1_kbps"][1]
    assert df["trials"].tolist() == [3, 3, 3, 3]


def test_build_table_refuses_keys_that_do_not_identify_points(fake):
    res = sweep.run_sweep(sweep.load_points(DOC))
    pts = [(p.coords, r) for p, r in zip(res.points, res.results, strict=True)]
    table = {"keys": ["c1"], "columns": [{"name": "x", "metric": "a", "stat": "mean"}]}
    with pytest.raises(ValueError, match="do not identify a point"):
        tables.build_table(table, {"a": {"kind": "goodput", "group": "a"}}, pts)
    # A 'where' selects the points.
    table["where"] = {"c2": "y"}
    df = tables.build_table(table, {"a": {"kind": "goodput", "group": "a"}}, pts)
    assert df["c1"].tolist() == ["x", "y"]


# ---------------------------------------------------------------------------------------------
# Published vs ours, on synthetic tables


def ours_table():
    return pd.DataFrame(
        {
            "stack": ["linux", "bsd", "windows", "solaris"],
            "mean_kbps": [1300.0, 1150.0, 1200.0, 999.0],
            "sd_kbps": [30.0, 80.0, 60.0, 1.0],
        }
    )


PUB = {
    "table": "",
    "source": "paper",
    "keys": ["stack"],
    "columns": ["mean_kbps", "sd_kbps"],
    "rows": [["linux", 1296, 33.3], ["bsd", 1242, 52.8], ["windows", 1024, 58.5]],
    "tolerance": 0.1,
    "order": [{"column": "mean_kbps"}],
    "pairs": [],
}


def test_compare_cells_differences_and_agreement():
    c = tables.compare(PUB, ours_table())
    cells = c.cells.set_index(["stack", "column"])
    assert len(c.cells) == 6  # only published cells; solaris has no published row
    r = cells.loc[("linux", "mean_kbps")]
    assert r["published"] == 1296 and r["ours"] == 1300
    assert r["diff"] == pytest.approx(4) and r["rel_diff"] == pytest.approx(4 / 1296)
    assert bool(r["agree"]) is True
    assert bool(cells.loc[("windows", "mean_kbps")]["agree"]) is False  # +17 %
    assert bool(cells.loc[("bsd", "sd_kbps")]["agree"]) is False  # +52 %
    assert c.cells_agree == (4, 6)


def test_compare_ordering_disagreement_is_reported():
    c = tables.compare(PUB, ours_table())
    (o,) = c.orders
    assert o.published == ["linux", "bsd", "windows"]
    assert o.ours == ["linux", "windows", "bsd"]
    assert o.agree is False
    assert o.tau == pytest.approx(1 / 3)
    ours = ours_table()
    ours.loc[ours["stack"] == "bsd", "mean_kbps"] = 1250.0
    (o,) = tables.compare(PUB, ours).orders
    assert o.agree is True and o.tau == 1.0


def test_compare_missing_row_has_no_agreement():
    ours = ours_table()[ours_table()["stack"] != "bsd"]
    c = tables.compare(PUB, ours)
    bsd = c.cells[c.cells["stack"] == "bsd"]
    assert bsd["ours"].isna().all() and bsd["agree"].isna().all()
    assert c.cells_agree == (3, 6)


def test_compare_pairs_and_ordering_within_a_key():
    pub = {
        "keys": ["c1", "c2"],
        "columns": ["c1_mbps", "c2_mbps"],
        "rows": [["xp", "linux", 48.4, 325.8], ["linux", "xp", 325.8, 48.4], ["xp", "xp", 50, 51]],
        "order": [{"column": "c1_mbps", "within": "c2"}],
        "pairs": [["c1_mbps", "c2_mbps"]],
    }
    ours = pd.DataFrame(
        {
            "c1": ["xp", "linux", "xp"],
            "c2": ["linux", "xp", "xp"],
            "c1_mbps": [60.0, 300.0, 55.0],
            "c2_mbps": [300.0, 60.0, 50.0],
        }
    )
    c = tables.compare(pub, ours)
    # without a mirror spec every row counts; xp / xp (50 vs 51) is a published tie (< 5 %)
    assert [(p.row, p.published, p.ours, p.agree) for p in c.pairs] == [
        ("xp / linux", "c2_mbps", "c2_mbps", True),
        ("linux / xp", "c1_mbps", "c1_mbps", True),
        ("xp / xp", "c2_mbps", "c1_mbps", None),
    ]
    assert "tie" in c.pairs[2].why
    # Within c2 = xp: published linux (325.8) > xp (50); ours 300 > 55: agree.
    assert [(o.group, o.agree) for o in c.orders] == [("xp", True)]
    assert c.orders_agree == (3, 3)


def test_kendall_tau():
    assert tables.kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert tables.kendall_tau([1, 2, 3], [30, 20, 10]) == -1.0
    assert math.isnan(tables.kendall_tau([1], [1]))


# ---------------------------------------------------------------------------------------------
# Checks of published observations


CHECK_TABLE = pd.DataFrame(
    {
        "stack": ["linux", "bsd", "obsd", "xp", "linux", "bsd", "obsd", "xp"],
        "rtt": ["50", "50", "50", "50", "200", "200", "200", "200"],
        "v": [900.0, 500.0, 100.0, 200.0, 880.0, 400.0, 90.0, 210.0],
        "w": [1000.0, 1000.0, 50.0, 100.0, 1000.0, 1000.0, 50.0, 100.0],
        "iw": [2, 3, 1, 2, 2, 3, 1, 2],
    }
)


@pytest.mark.parametrize(
    ("spec_", "passed"),
    [
        ({"kind": "top", "column": "v", "expect": ["linux"]}, True),
        ({"kind": "top", "column": "v", "expect": ["bsd"]}, False),
        ({"kind": "bottom", "column": "v", "expect": ["obsd"]}, True),
        ({"kind": "only_above", "column": "iw", "threshold": 2, "expect": ["bsd"]}, True),
        ({"kind": "only_above", "column": "iw", "threshold": 1, "expect": ["bsd"]}, False),
        ({"kind": "order", "column": "v", "expect": ["linux", "bsd", "xp", "obsd"]}, True),
        ({"kind": "order", "column": "v", "expect": ["linux", "xp", "bsd"]}, False),
        ({"kind": "range", "column": "v", "lo": 800, "where": {"stack": "linux"}}, True),
        ({"kind": "range", "column": "v", "hi": 205, "where": {"stack": "xp"}}, False),
        (
            {
                "kind": "ratio",
                "column": "v",
                "a": "bsd",
                "b": "xp",
                "along": "rtt",
                "lo": 1.5,
                "hi": 2.6,
            },
            True,
        ),
        (
            {
                "kind": "ratio",
                "column": "v",
                "a": "bsd",
                "b": "xp",
                "along": "rtt",
                "lo": 2.0,
                "hi": 2.6,
            },
            False,
        ),
        (
            {
                "kind": "decreasing",
                "column": "v",
                "key": "stack",
                "along": "rtt",
                "where": {"stack": ["linux", "bsd", "obsd"]},
            },
            True,
        ),
        ({"kind": "increasing", "column": "v", "key": "stack", "along": "rtt"}, False),
        (
            {
                "kind": "below",
                "column": "v",
                "other": "w",
                "factor": 1.0,
                "where": {"stack": ["linux", "bsd"]},
            },
            True,
        ),
        ({"kind": "below", "column": "v", "other": "w", "factor": 1.0}, False),
        ({"kind": "less", "column": "v", "a": "xp", "b": "bsd"}, True),
        ({"kind": "not_modelled"}, None),
        ({"kind": "top", "column": "v", "expect": ["x"], "where": {"stack": "none"}}, None),
    ],
)
def test_checks(spec_, passed):
    res = tables.check({"claim": "c", **spec_}, CHECK_TABLE, ["stack", "rtt"])
    assert res.passed is passed, res.detail
    assert res.detail


def test_top_check_averages_over_the_other_keys():
    res = tables.check(
        {"claim": "c", "kind": "top", "column": "v", "expect": ["linux"]},
        CHECK_TABLE,
        ["stack", "rtt"],
    )
    assert "linux (890)" in res.detail


# ---------------------------------------------------------------------------------------------
# The study library

EXPECTED_IDS = {
    "jansen2005": {"J1", "J2", "J3", "J4"},
    "iwanaga2010": {"I1", "I2", "I3", "I4", "I5"},
    "kumazoe2007": {"K1", "K2", "K3", "K4", "K5"},
    "zhou2012": {"Z1", "Z2", "Z3"},
    "slac2003": {"S1", "S2"},
}


def _docs(study):
    for f in sorted((STUDIES_DIR / study).glob("*.toml")):
        yield f, tomllib.loads(f.read_text())


def test_every_study_has_a_scenario_per_experiment():
    assert set(STUDIES) == set(EXPECTED_IDS)
    for study, ids in EXPECTED_IDS.items():
        found = set()
        for f, d in _docs(study):
            dims = sweep.coordinate_names(sweep.dimensions(d, str(f)))
            rep = spec.parse_report(d, str(f), dims)
            found.add(rep.id)
            assert re.match(r"^[A-Z][0-9]+$", rep.id)
            # Every table has a key column named like a stack, algorithm or case.
            for t in rep.tables:
                assert t["keys"], f"{f}: a table without key columns"
        assert found == ids, study


def test_published_trial_counts_and_durations():
    want = {
        ("jansen2005", "J2"): (100, "60s"),
        ("jansen2005", "J3"): (100, "60s"),
        ("iwanaga2010", "I1"): (5, "100s"),
        ("iwanaga2010", "I2"): (5, "300s"),
        ("iwanaga2010", "I3-rtt"): (5, "300s"),
        ("iwanaga2010", "I3-os"): (5, "300s"),
        ("iwanaga2010", "I4"): (5, "300s"),
        ("iwanaga2010", "I5"): (5, "300s"),
        ("slac2003", "S1"): (1, "1200s"),
        ("slac2003", "S2"): (1, "1200s"),
    }
    for (study, stem), (trials, duration) in want.items():
        d = tomllib.loads((STUDIES_DIR / study / f"{stem}.toml").read_text())
        assert (d["trials"], d["duration"]) == (trials, duration), stem


def test_unpublished_parameters_are_commented():
    # Each study scenario states its assumptions in a comment block at the top.
    for study in EXPECTED_IDS:
        for f, _ in _docs(study):
            head = f.read_text().split("\nname = ")[0]
            assert "not publish" in head or "not give" in head, f


@needs_core
def test_every_point_of_every_study_validates():
    for study in EXPECTED_IDS:
        for f, _ in _docs(study):
            assert sweep.load_points(f)


# ---------------------------------------------------------------------------------------------
# End to end


@needs_core
def test_reproduce_jansen_quick_writes_the_tables(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["reproduce", "jansen2005", "--quick", "--out", str(out), "--quiet"]) == 0
    d = out / "jansen2005"
    for exp_id in ("J1", "J2", "J3", "J4"):
        assert (d / f"{exp_id}.csv").exists(), exp_id
    j3 = pd.read_csv(d / "J3.csv")
    assert list(j3.columns) == ["stack", "min_kbps", "mean_kbps", "max_kbps", "sd_kbps", "trials"]
    assert set(j3["stack"]) == {
        "linux-2.4.27",
        "freebsd-5.3",
        "freebsd-5.2.1",
        "windows-xp",
        "openbsd-3.5",
    }
    assert (j3["min_kbps"] <= j3["mean_kbps"]).all() and (j3["mean_kbps"] <= j3["max_kbps"]).all()
    assert (j3["mean_kbps"] > 0).all() and (j3["mean_kbps"] < 2000).all()  # a 2 Mbit/s path
    cmp = pd.read_csv(d / "compare" / "J3.csv")
    assert list(cmp.columns) == [
        "stack",
        "column",
        "published",
        "ours",
        "diff",
        "rel_diff",
        "agree",
        "role",
        "knob",
    ]
    assert set(cmp["role"]) == {"fitted"}  # J3's router buffer was fitted to these means
    assert len(cmp) == 20
    assert cmp["diff"].to_numpy() == pytest.approx((cmp["ours"] - cmp["published"]).to_numpy())
    j1 = pd.read_csv(d / "J1.csv")
    assert "acked_kB" in j1.columns and "iw_segments" in j1.columns
    # RFC 3390: min(4 MSS, max(2 MSS, 4380 B)) = 4380 B at MSS 1448 (timestamps)
    assert j1.set_index("stack")["iw_segments"]["freebsd-5.3"] == pytest.approx(4380 / 1448)
    checks = pd.read_csv(d / "checks.csv")
    assert {"id", "claim", "role", "holds"} <= set(checks.columns)
    assert set(checks["role"]) == {"independent", "input"}  # J1's IW and J4's quirk checks: input
    summary = json.loads((out / "summary.json").read_text())["studies"]["jansen2005"]
    # the fitted J3 cells are not under the independent counts; the sanity checks are apart
    assert summary["cells"] == 0 and summary["by_role"]["fitted"]["cells"] == 20
    assert summary["by_role"]["input"]["checks"] == 6 and summary["checks"] == 1
    assert (out / "index.html").exists() and (d / "index.html").exists()
    assert "J3" in (d / "index.html").read_text()
    assert (out / "summary.csv").exists()
    assert capsys.readouterr().out.strip() == str(out)


def test_reproduce_unknown_study_is_an_error(capsys):
    assert main(["reproduce", "jansen2006", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "unknown study 'jansen2006'" in err and "jansen2005" in err


# ---------------------------------------------------------------------------------------------
# Metrics on a hand-made time series


class _Scenario:
    duration_ns = 10_000_000_000
    interval_ns = 1_000_000_000


class _Result:
    """The parts of a Result the metrics read: one TCP flow 'a' (group 'a'), 2 trials."""

    def __init__(self, cwnd, ssthresh, goodput, snd_una):
        rows = []
        for k in range(2):
            for i, t in enumerate(range(1, 11)):
                rows.append(
                    {
                        "trial": k,
                        "flow": "a",
                        "group": "a",
                        "time_s": float(t),
                        "cwnd_bytes": cwnd[i] * 1000.0,
                        "cwnd_segments": float(cwnd[i]),
                        "ssthresh_bytes": ssthresh[i] * 1000.0,
                        "goodput_bps": goodput[i] * (1 + k),
                        "delivered_bytes": sum(goodput[: i + 1]) / 8 * (1 + k),
                        "snd_una": snd_una[i],
                        "snd_nxt": snd_una[i] + 1000,
                        "dupacks": float(i),
                    }
                )
        self.timeseries = pd.DataFrame(rows)
        self.scenario = _Scenario()
        self.raw = [{"flows": [{"name": "a", "dupacks": 9}]}] * 2
        self.configs = [{"flows": [{"name": "a", "start_ns": 1_000_000_000}]}] * 2
        self.summary = {
            "groups": {"a": {"kind": "tcp", "flows": ["a"], "goodput_bps_trials": [1.0, 2.0]}},
            "flows": {"a": {"goodput_bps_trials": [1.0, 2.0]}},
        }
        self.changes = None
        self.captures = []


def test_metrics_on_a_known_series():
    # cwnd: slow start to 10, then congestion avoidance +1 every 2 s, a halving at 8 s.
    cwnd = [2, 4, 8, 10, 10, 11, 11, 6, 6, 7]
    ssth = [100, 100, 100, 10, 10, 10, 10, 6, 6, 6]
    goodput = [1e6, 2e6, 4e6, 8e6, 8e6, 8e6, 8e6, 4e6, 4e6, 4e6]
    r = _Result(cwnd, ssth, goodput, [i * 5000 for i in range(10)])
    # CA intervals without a reduction: 4-5, 5-6, 6-7, 8-9, 9-10 (5 s), growth 1+1 segments.
    assert metrics.evaluate(r, {"kind": "cwnd_growth", "group": "a"}) == [2500.0, 2500.0]
    # Goodput in a window, from the delivered bytes: 3 s to 7 s, trial 1 doubles.
    w = metrics.evaluate(r, {"kind": "goodput", "group": "a", "t0": 3, "t1": "70%"})
    assert w == pytest.approx([8e6, 16e6])
    # First time the per-interval goodput reaches 4 Mbit/s, from the flow's start at 1 s.
    t = metrics.evaluate(r, {"kind": "time_to", "group": "a", "threshold": 4, "unit": "mbps"})
    assert t == [2.0, 1.0]
    assert metrics.evaluate(r, {"kind": "series_at", "group": "a", "column": "snd_una", "t": 4.2})
    assert metrics.evaluate(
        r, {"kind": "series_at", "group": "a", "column": "snd_una", "t": 4.2, "unit": "kB"}
    ) == [15.0, 15.0]
    # A counter's increase over a window, and over the whole run (from the raw result).
    assert metrics.evaluate(
        r, {"kind": "counter", "group": "a", "column": "dupacks", "t0": 2, "t1": 5}
    ) == [3.0, 3.0]
    assert metrics.evaluate(r, {"kind": "counter", "group": "a", "column": "dupacks"}) == [9.0, 9.0]
    assert metrics.evaluate(r, {"kind": "initial_cwnd", "group": "a"}) == [2.0, 2.0]


def test_trend_and_ratio_checks_need_values():
    one = CHECK_TABLE[CHECK_TABLE["rtt"] == "50"]
    res = tables.check(
        {"claim": "c", "kind": "increasing", "column": "v", "key": "stack", "along": "rtt"},
        one,
        ["stack", "rtt"],
    )
    assert res.passed is None  # one point per stack: no trend to check
    res = tables.check(
        {"claim": "c", "kind": "ratio", "column": "v", "a": "bsd", "b": "nobody", "lo": 1},
        CHECK_TABLE,
        ["stack", "rtt"],
    )
    assert res.passed is None
