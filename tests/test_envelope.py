"""Assumption envelopes (issue 15 §4): [assume] tables, ``tcplab reproduce --envelope``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import needs_core
from tcplab.cli import main
from tcplab.errors import ScenarioError
from tcplab.reproduce import envelope

# A window-limited flow: goodput ≈ window / RTT, so the window assumption moves it monotonically
# (16 KiB / 40 ms ≈ 3.3 Mbit/s; 8 KiB: half; 64 KiB: the 10 Mbit/s link).
STUDY = """
name = "envtest"
duration = "4s"
trials = 2
seed = 5
stack = "linux-6"
[path]
rate = "10Mbit"
rtt = "40ms"
queue = "40pkt"
[[flow]]
name = "a"
window = "16KiB"
[sweep]
stack = ["linux-6", "linux-2.6.39", "freebsd-5.3"]
[assume.window]
field = "flow.0.window"
value = "16KiB"
low = "8KiB"
high = "64KiB"
why = "iperf -w is not given"
[assume.buffer]
field = "path.queue"
value = "40pkt"
low = "20pkt"
high = "80pkt"
why = "the router buffer is not given"
[report]
id = "J2"
title = "t"
[report.metric.goodput]
kind = "goodput"
group = "a"
unit = "kbps"
[[report.table]]
keys = ["stack"]
metric = "goodput"
stats = ["mean"]
[[report.published]]
role = "independent"
columns = ["mean_kbps"]
rows = [["linux-6", 3200.0], ["linux-2.6.39", 8000.0], ["freebsd-5.3", 50000.0]]
[[report.check]]
role = "independent"
claim = "every stack above 5 Mbit/s"
kind = "range"
column = "mean_kbps"
lo = 5000
"""


def _study(tmp_path, text=STUDY):
    d = tmp_path / "studies" / "jansen2005"
    d.mkdir(parents=True)
    (d / "J2.toml").write_text(text, encoding="utf-8")
    return tmp_path / "studies"


@needs_core
def test_envelope_reports_reachable_and_outside_cells(tmp_path, capsys):
    studies = _study(tmp_path)
    out = tmp_path / "rep"
    args = ["reproduce", "jansen2005", "--studies-dir", str(studies), "--out", str(out)]
    assert main([*args, "--envelope", "--quiet", "--no-record"]) == 0
    env = pd.read_csv(out / "jansen2005" / "envelope.csv").set_index("stack")
    assert list(env.index) == ["linux-6", "linux-2.6.39", "freebsd-5.3"]
    lo, hi = env["envelope_low"], env["envelope_high"]
    assert (lo < env["ours"]).all() and (env["ours"] < hi).all()
    assert (hi > 1.8 * lo).all()  # 8 → 64 KiB moves a window-limited flow a lot
    assert set(env["moved_most_by"]) == {"window"}
    assert env.loc["linux-6", "verdict"] == "agrees"
    assert env.loc["linux-2.6.39", "verdict"] == "within the envelope"
    assert env.loc["freebsd-5.3", "verdict"].startswith("outside every plausible envelope")
    checks = pd.read_csv(out / "jansen2005" / "envelope-checks.csv")
    row = checks.iloc[0]
    assert not row["holds"] and row["variants"] == 6  # 2 × 2 one at a time + all low + all high
    assert "window=high" in row["holds_in"] and "window=low" not in row["holds_in"]
    summary = json.loads((out / "summary.json").read_text())["studies"]["jansen2005"]
    assert summary["envelope"]["independent"] == {
        "cells": 3,
        "agree": 1,
        "reachable": 2,
        "outside": 1,
        # The claim fails as the scenario is and holds with the larger window only.
        "observations": 1,
        "observations_hold": 0,
        "observations_hold_somewhere": 1,
        "observations_hold_nowhere": 0,
    }
    md = (out / "summary.md").read_text()
    assert "envelope: independent results" in md
    assert "cells 2/3 reachable, 1 outside; observations 1/1 hold in some variant, 0 in none" in md
    html = (out / "jansen2005" / "index.html").read_text()
    assert "Assumption envelope" in html and "iperf -w is not given" in html


@needs_core
def test_envelope_checks_the_declared_value(tmp_path, capsys):
    studies = _study(tmp_path, STUDY.replace('value = "16KiB"', 'value = "32KiB"'))
    args = ["reproduce", "jansen2005", "--studies-dir", str(studies), "--envelope"]
    assert main([*args, "--out", str(tmp_path / "r"), "--no-record"]) == 2
    err = capsys.readouterr().err
    assert "J2.toml: assume" in err and "differs from what the scenario uses" in err
    assert not (tmp_path / "r").exists()


@needs_core
def test_envelope_value_may_be_a_knob_left_at_its_engine_default(tmp_path):
    """A receiver knob the personalities leave unset (here rx_ring, engine default 256) may be
    declared at its default: absent and default are the same configuration. Another value is
    still refused."""
    from pathlib import Path

    from tcplab import _core
    from tcplab.reproduce import core, jansen2005

    default = {k["name"]: k["default"] for k in _core.tcp_knobs()}["rx_ring"]
    ring = f"""
[assume.ring]
field = "flow.0.receiver_tcp.rx_ring"
value = {default}
low = 48
high = 1024
why = "not given"
"""
    studies = _study(tmp_path, STUDY.replace("[report]", ring + "[report]", 1))
    exps = core.load_experiments(Path(studies), jansen2005.STUDY, quick=False)
    labels = [v.label for e in envelope.plan(exps) for v in e.variants]
    assert "ring=low" in labels and "ring=high" in labels
    moved = ring.replace(f"value = {default}", "value = 64")
    other = STUDY.replace("[report]", moved + "[report]", 1)
    (Path(studies) / "jansen2005" / "J2.toml").write_text(other, encoding="utf-8")
    exps = core.load_experiments(Path(studies), jansen2005.STUDY, quick=False)
    with pytest.raises(ScenarioError, match="differs from what the scenario uses"):
        envelope.plan(exps)


@needs_core
def test_envelope_points_move_only_the_named_sweep_points(tmp_path):
    """An assumption with ``points`` (a property of one swept stack) moves only those points:
    the others keep the scenario's value in every variant. An unknown label is refused."""
    from pathlib import Path

    from tcplab.reproduce import core, jansen2005

    why = 'why = "iperf -w is not given"'
    text = STUDY.replace(why, why + '\npoints = ["stack=freebsd-5.3"]')
    studies = _study(tmp_path, text)
    exps = core.load_experiments(Path(studies), jansen2005.STUDY, quick=False)
    (env,) = envelope.plan(exps)
    high = next(v for v in env.variants if v.label == "window=high").experiment
    windows = {p.label: sc.config(sc.seed)["flows"][0]["tcp"]["rcvbuf"] for p, sc in high.points}
    base = {p.label: sc.config(sc.seed)["flows"][0]["tcp"]["rcvbuf"] for p, sc in exps[0].points}
    assert windows["stack=freebsd-5.3"] > base["stack=freebsd-5.3"]
    assert windows["stack=linux-6"] == base["stack=linux-6"]
    assert windows["stack=linux-2.6.39"] == base["stack=linux-2.6.39"]
    from tcplab.reproduce import report

    assert "at stack=freebsd-5.3 only" in report._envelope_html(env, [], [])
    bad = text.replace('points = ["stack=freebsd-5.3"]', 'points = ["stack=freebsd-9"]')
    (Path(studies) / "jansen2005" / "J2.toml").write_text(bad, encoding="utf-8")
    exps = core.load_experiments(Path(studies), jansen2005.STUDY, quick=False)
    with pytest.raises(ScenarioError, match="names no sweep point"):
        envelope.plan(exps)


@needs_core
def test_envelope_points_may_move_a_field_only_those_points_accept(tmp_path):
    """A restricted assumption may move a field the other points would refuse (a parameter of
    the algorithm one swept stack uses: newreno has no delayed_ack_comp); those points are
    loaded without it, the named one moves."""
    from pathlib import Path

    from tcplab.reproduce import core, jansen2005

    comp = """
[assume.comp]
field = "flow.0.cca.delayed_ack_comp"
value = true
low = false
high = true
why = "the sender's CUBIC build is not given"
points = ["stack=linux-2.6.39"]
"""
    studies = _study(tmp_path, STUDY.replace("[report]", comp + "[report]", 1))
    exps = core.load_experiments(Path(studies), jansen2005.STUDY, quick=False)
    (env,) = envelope.plan(exps)
    low = next(v for v in env.variants if v.label == "comp=low").experiment
    cca = {p.label: sc.config(sc.seed)["flows"][0]["cca"] for p, sc in low.points}
    assert cca["stack=linux-2.6.39"]["params"]["delayed_ack_comp"] is False
    assert cca["stack=freebsd-5.3"]["name"] == "newreno"
    assert "delayed_ack_comp" not in cca["stack=linux-6"]["params"]


@needs_core
def test_kumazoe_cubic_curve_error_moves_only_the_cubic_flows():
    """Kumazoe's [assume.cubic_curve_error] (2.6.16's CUBIC v2.0 curve term, UNVERIFIED) is
    declared at the personality's value and moves v2_scaling_bug at the CUBIC points only."""
    from tcplab.reproduce import core, kumazoe2007, spec

    exps = core.load_experiments(spec.find_studies_dir(None), kumazoe2007.STUDY, quick=False)
    envs = envelope.plan(exps)
    assert len(envs) == 5
    for env in envs:
        low = next(v for v in env.variants if v.label == "cubic_curve_error=low").experiment
        for p, sc in low.points:
            for flow in sc.config(sc.seed)["flows"]:
                bug = flow["cca"].get("params", {}).get("v2_scaling_bug")
                assert bug is (False if flow["cca"]["name"] == "cubic" else None), p.label


@needs_core
def test_envelope_refuses_a_swept_field(tmp_path, capsys):
    text = STUDY.replace('field = "path.queue"', 'field = "stack"')
    studies = _study(tmp_path, text)
    args = ["reproduce", "jansen2005", "--studies-dir", str(studies), "--envelope"]
    assert main([*args, "--out", str(tmp_path / "r"), "--no-record"]) == 2
    assert "assume.buffer.field" in capsys.readouterr().err


_ONE = {"field": "x", "value": 1, "low": 0, "high": 2, "why": "w"}


@pytest.mark.parametrize(
    "table, field, text",
    [
        ({"field": "x", "value": 1, "low": 0, "high": 2}, "assume.a.why", "missing"),
        ({"field": "x", "value": 1, "low": 2, "high": 2, "why": "w"}, "assume.a.high", "equals"),
        ({"field": "x", "value": 1, "low": 0, "high": 2, "why": "w", "hi": 3}, "assume.a.hi", ""),
        ({"field": [], "value": 1, "low": 0, "high": 2, "why": "w"}, "assume.a.field", ""),
        ({**_ONE, "points": []}, "assume.a.points", ""),
        ({**_ONE, "points": "p"}, "assume.a.points", ""),
    ],
)
def test_assume_table_errors_name_the_field(table, field, text):
    with pytest.raises(ScenarioError) as e:
        envelope.parse_assumptions({"assume": {"a": table}}, "f.toml")
    assert e.value.field == field and text in str(e.value)


@needs_core
def test_scenario_validation_checks_assume(tmp_path, capsys):
    bad = STUDY.replace('why = "the router buffer is not given"\n', "")
    f = tmp_path / "s.toml"
    f.write_text(bad, encoding="utf-8")
    assert main(["validate", str(f)]) == 2
    assert "assume.buffer.why" in capsys.readouterr().err


@needs_core
def test_envelope_without_assumptions_is_an_error(tmp_path, capsys):
    # Every shipped study declares an [assume] table: the test study without its own.
    plain = STUDY[: STUDY.index("[assume.window]")] + STUDY[STUDY.index("[report]") :]
    studies = _study(tmp_path, plain)
    args = ["reproduce", "jansen2005", "--studies-dir", str(studies), "--envelope"]
    assert main([*args, "--out", str(tmp_path / "r"), "--no-record"]) == 2
    assert "no selected experiment declares an [assume] table" in capsys.readouterr().err
