"""The accounting of agreement (issue "agreement report"): roles, bounded indices, pairs counted
once with ties unscored, NaN failing, and `tcplab compare` never passing what it could not judge.
Every rule here is one a reviewer could catch us breaking; each test is built to fail if it is."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import ROOT
from tcplab.errors import ScenarioError
from tcplab.kernel import compare as kcompare
from tcplab.reproduce import core, spec, tables
from tcplab.results import jain_index

# ---------------------------------------------------------------------------------------------
# Roles in the [report] spec


def _report(**over):
    r = {
        "id": "X1",
        "metric": {
            "a": {"kind": "goodput", "group": "a", "unit": "mbps"},
            "j": {"kind": "jain"},
        },
        "table": [
            {
                "keys": ["stack"],
                "columns": [
                    {"name": "a_mbps", "metric": "a", "stat": "mean"},
                    {"name": "jain", "metric": "j", "stat": "mean"},
                ],
            }
        ],
        "published": [{"role": "independent", "columns": ["a_mbps"], "rows": [["x", 1.0]]}],
        "check": [
            {
                "role": "independent",
                "claim": "c",
                "kind": "top",
                "column": "a_mbps",
                "expect": ["x"],
            }
        ],
    }
    r.update(over)
    return r


def _parse(r):
    return spec.parse_report({"report": r}, "s.toml", ["stack"])


@pytest.mark.parametrize(
    ("mutate", "field", "text"),
    [
        (lambda r: r["check"][0].pop("role"), "report.check.0.role", "missing"),
        (lambda r: r["published"][0].pop("role"), "report.published.0.role", "missing"),
        (lambda r: r["check"][0].update(role="assumed"), "report.check.0.role", "unknown role"),
        (lambda r: r["check"][0].update(role="fitted"), "report.check.0.knob", "names the knob"),
        (
            lambda r: r["check"][0].update(role="fitted", knob="path.queue"),
            "report.check.0.knob",
            "not declared in [[report.fitted]]",
        ),
        (lambda r: r["check"][0].update(role="input"), "report.check.0.input", "configured value"),
        (
            lambda r: r["check"][0].update(knob="path.queue"),
            "report.check.0.knob",
            "only a 'fitted' result",
        ),
        (
            lambda r: r["published"][0].update(role={"cells": "fitted"}),
            "report.published.0.role",
            "missing order, pairs",
        ),
        (
            lambda r: r.update(fitted=[{"knob": "path.queue", "value": "16pkt"}]),
            "report.fitted.0.fitted_to",
            "missing",
        ),
        (
            lambda r: r["published"][0].update(columns=["jain"], rows=[["x", 0.999]]),
            "report.published.0.abs_tolerance",
            "bounded index",
        ),
    ],
)
def test_role_errors_name_the_field(mutate, field, text):
    r = _report()
    mutate(r)
    with pytest.raises(ScenarioError) as e:
        _parse(r)
    assert e.value.field == field and text in str(e.value), str(e.value)


def test_fitted_declaration_and_part_roles_parse():
    r = _report(fitted=[{"knob": "path.loss", "value": "1%", "fitted_to": "the totals"}])
    r["published"][0].update(role={"cells": "fitted", "order": "fitted", "pairs": "independent"})
    r["published"][0]["knob"] = "path.loss"
    r["check"][0].update(role="input", input="path.rate = 5.5Gbit")
    rep = _parse(r)
    assert rep.fitted[0]["knob"] == "path.loss"
    assert rep.published[0]["role_of"] == {
        "cells": "fitted",
        "order": "fitted",
        "pairs": "independent",
    }
    assert rep.published[0]["knob"] == ["path.loss"]


def test_every_study_scenario_declares_roles_and_its_fitted_knobs():
    """The repo's own scenarios pass the validation, and the fits the issue names are declared."""
    studies = ROOT / "scenarios" / "studies"
    import tomllib

    def report(rel):
        doc = tomllib.loads((studies / rel).read_text())
        return doc["report"]

    j3 = report("jansen2005/J3.toml")
    assert j3["published"][0]["role"] == "fitted" and j3["fitted"][0]["knob"] == "path.queue"
    k1 = report("kumazoe2007/K1.toml")
    assert [c["role"] for c in k1["check"]][:2] == ["input", "input"]
    j4 = report("jansen2005/J4.toml")
    assert {c["role"] for c in j4["check"]} == {"input"}
    s1 = report("slac2003/S1.toml")
    assert "clock_granularity" in s1["fitted"][0]["knob"]
    z1 = report("zhou2012/Z1.toml")
    assert z1["published"][0]["role"]["cells"] == "fitted"


# ---------------------------------------------------------------------------------------------
# Bounded indices: absolute tolerance


def _pub(columns, rows, **kw):
    return {"keys": ["stack"], "columns": columns, "rows": rows, "role": "independent", **kw}


def test_a_three_to_one_split_fails_a_jain_check_of_0999():
    ours_jain = jain_index([3.0, 1.0])
    assert ours_jain == pytest.approx(0.8)
    ours = pd.DataFrame({"stack": ["x"], "jain": [ours_jain]})
    c = tables.compare(_pub(["jain"], [["x", 0.999]], abs_tolerance={"jain": 0.01}), ours)
    assert c.cells_agree == (0, 1)
    # the old relative rule (±20 % of 0.999) would have accepted it: that is the bug
    relative = tables.compare(_pub(["jain"], [["x", 0.999]], tolerance=0.2), ours)
    assert relative.cells_agree == (1, 1)
    near = pd.DataFrame({"stack": ["x"], "jain": [0.992]})
    assert tables.compare(
        _pub(["jain"], [["x", 0.999]], abs_tolerance={"jain": 0.01}), near
    ).cells_agree == (1, 1)


# ---------------------------------------------------------------------------------------------
# Pairs: each unordered comparison once; same-configuration rows and ties not scored

MIRROR = {"keys": ["c1", "c2"], "columns": [["c1_mbps", "c2_mbps"]]}


def _matrix_pub():
    return {
        "keys": ["c1", "c2"],
        "columns": ["c1_mbps", "c2_mbps"],
        "rows": [
            ["xp", "xp", 50.0, 50.1],  # same configuration: a coin flip
            ["xp", "linux", 48.4, 325.8],
            ["linux", "xp", 325.8, 48.4],  # the mirror of the row above
            ["xp", "w7", 64.2, 66.0],  # a published tie (< 5 %)
            ["linux", "linux", 205.4, 150.0],  # same configuration, even with a big gap
        ],
        "pairs": [["c1_mbps", "c2_mbps"]],
        "mirror": MIRROR,
        "role": "independent",
        "tie": 0.05,
    }


def _matrix_ours(xp_linux=(60.0, 300.0)):
    return pd.DataFrame(
        {
            "c1": ["xp", "xp", "linux", "xp", "linux"],
            "c2": ["xp", "linux", "xp", "w7", "linux"],
            "c1_mbps": [55.0, xp_linux[0], xp_linux[1], 70.0, 100.0],
            "c2_mbps": [50.0, xp_linux[1], xp_linux[0], 60.0, 200.0],
        }
    )


def test_pairs_count_each_unordered_comparison_once_and_skip_ties():
    c = tables.compare(_matrix_pub(), _matrix_ours())
    assert c.mirrored_rows == 1
    assert len(c.cells) == 8  # 4 distinct rows × 2 columns: the mirror is not counted again
    scored = [p for p in c.pairs if p.agree is not None]
    assert [p.row for p in scored] == ["xp / linux"]
    why = {p.row: p.why for p in c.pairs if p.agree is None}
    assert why["xp / xp"] == why["linux / linux"] == "same configuration on both sides"
    assert "tie" in why["xp / w7"]
    assert c.orders_agree == (1, 1)
    # the scored pair can fail: ours reversed
    bad = tables.compare(_matrix_pub(), _matrix_ours(xp_linux=(300.0, 60.0)))
    assert bad.orders_agree == (0, 1)


def test_published_spread_makes_a_tie():
    pub = _pub(
        ["a_mbps", "b_mbps", "a_sd", "b_sd"],
        [["x", 100.0, 115.0, 20.0, 5.0]],
        pairs=[["a_mbps", "b_mbps"]],
        spread={"a_mbps": "a_sd", "b_mbps": "b_sd"},
    )
    ours = pd.DataFrame(
        {"stack": ["x"], "a_mbps": [1.0], "b_mbps": [2.0], "a_sd": [0], "b_sd": [0]}
    )
    c = tables.compare(pub, ours)
    assert c.pairs[0].agree is None and "spread" in c.pairs[0].why


# ---------------------------------------------------------------------------------------------
# NaN fails


def test_a_nan_row_fails_a_range_check_and_says_so():
    df = pd.DataFrame({"stack": ["a", "b"], "v": [5.0, math.nan]})
    res = tables.check({"claim": "c", "kind": "range", "column": "v", "lo": 1}, df, ["stack"])
    assert res.passed is False and "NaN" in res.detail and "b" in res.detail


@pytest.mark.parametrize(
    "spec_",
    [
        {"kind": "top", "expect": ["a"]},
        {"kind": "order", "expect": ["a", "b"]},
        {"kind": "less", "a": "a", "b": "b"},
        {"kind": "below", "other": "w"},
        {"kind": "increasing"},
    ],
)
def test_nan_fails_every_check_kind(spec_):
    df = pd.DataFrame({"stack": ["a", "b"], "v": [5.0, math.nan], "w": [9.0, 9.0]})
    res = tables.check({"claim": "c", "column": "v", **spec_}, df, ["stack"])
    assert res.passed is False and "NaN" in res.detail


def test_nan_cells_and_rankings_fail_but_missing_rows_are_not_evaluated():
    pub = _pub(["v"], [["a", 1.0], ["b", 2.0], ["c", 3.0]], order=[{"column": "v"}])
    ours = pd.DataFrame({"stack": ["a", "b"], "v": [1.0, math.nan]})  # no row c at all
    c = tables.compare(pub, ours)
    agree = dict(zip(c.cells["stack"], c.cells["agree"], strict=True))
    assert agree["a"] is True and agree["b"] is False and agree["c"] is None
    assert c.cells_agree == (1, 3)
    assert [o.agree for o in c.orders] == [False]


# ---------------------------------------------------------------------------------------------
# Counting by role


def test_fitted_results_never_count_as_agreement():
    exp = type("E", (), {})()
    exp.id = "X1"
    exp.report = type("R", (), {"fitted": [{"knob": "path.queue", "value": 16, "fitted_to": "t"}]})
    ours = pd.DataFrame({"stack": ["x", "y"], "v": [1.0, 2.0]})
    fitted = tables.compare(
        {**_pub(["v"], [["x", 1.0], ["y", 2.0]], order=[{"column": "v"}]), "role": "fitted"}, ours
    )
    ind = tables.compare(_pub(["v"], [["x", 5.0]]), ours)
    chk = tables.CheckResult("c", "top", True, "d", role="input", input="path.rate")
    outcome = type("O", (), {"experiment": exp, "comparisons": [fitted, ind], "checks": [chk]})
    s = core.agreement([outcome])
    assert (s["cells_agree"], s["cells"], s["orders"]) == (0, 1, 0)
    assert s["by_role"]["fitted"]["cells_agree"] == 2 and s["by_role"]["fitted"]["orders"] == 1
    assert s["checks"] == 0 and s["by_role"]["input"]["checks_hold"] == 1
    assert s["fitted_knobs"][0]["knob"] == "path.queue"


# ---------------------------------------------------------------------------------------------
# tcplab compare: not evaluated is not a pass


def test_compare_verdict_never_passes_on_an_unevaluated_check():
    ok = kcompare._check(0.01, True, "l")
    nan = kcompare._check(math.nan, True, "l")  # e.g. a kernel flow with 0 bytes: rel diff NaN
    assert nan["pass"] is None
    assert kcompare._verdict({"a": ok}) == "pass"
    assert kcompare._verdict({"a": ok, "b": nan}) == "not evaluated"
    assert kcompare._verdict({"a": kcompare._check(1.0, False, "l"), "b": nan}) == "FAIL"


def test_a_kernel_flow_with_zero_bytes_does_not_pass():
    from test_kernel_unit import MS, S, _raw, dumbbell

    cfg = dumbbell(duration=10 * S)
    times = [k * S for k in range(1, 11)]
    sim = _raw("f0", times, [2_000_000 * t // S for t in times], [0, 5 * S], [100_000, 200_000])
    kern = {
        "valid": True,
        "flows": [{"name": "f0", "bytes_delivered": 0, "retransmits": 0, "timeouts": 0}],
        "series": {
            "flow": [0] * 10,
            "time_ns": times,
            "delivered_bytes": [0] * 10,
            "cwnd_bytes": sim["series"]["cwnd_bytes"],  # the same cwnd: only the bytes differ
        },
        "kernel": {"flows": [{"name": "f0", "start_offset_ns": 0 * MS}]},
    }
    rep = kcompare.fidelity(cfg, sim, kern)
    f = rep["flows"][0]
    assert f["checks"]["mean_goodput"]["pass"] is None  # 0 bytes: the relative diff is undefined
    assert f["verdict"] == "not evaluated" and not f["pass"] and not rep["pass"]
    assert "Not evaluated" in kcompare._markdown("x", rep)
