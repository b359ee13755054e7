"""Sweeps (tcplab.sweep): expansion, labels, coordinates, errors, running, CLI output."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import tcplab.engines
from conftest import synthetic_engine
from tcplab import sweep
from tcplab.cli import main
from tcplab.errors import ScenarioError

BASE = {
    "name": "s",
    "duration": "5s",
    "trials": 2,
    "path": {"rate": "10Mbit", "rtt": "20ms"},
    "flow": [{"name": "a"}, {"name": "b", "cca": "reno"}],
}


def doc(**sweep_spec):
    d = json.loads(json.dumps(BASE))
    d["sweep"] = sweep_spec
    return d


@pytest.fixture
def fake(monkeypatch, fake_catalog):
    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: synthetic_engine)
    return fake_catalog


# ---------------------------------------------------------------------------------------------
# Expansion


def test_no_sweep_is_one_point_with_empty_label():
    pts = sweep.expand(BASE)
    assert len(pts) == 1
    assert pts[0].label == ""
    assert pts[0].doc == BASE


def test_product_of_two_fields_in_file_order():
    pts = sweep.expand(doc(path={"rtt": ["20ms", "50ms"]}, flow={"0": {"cca": ["cubic", "reno"]}}))
    assert [p.label for p in pts] == [
        "rtt=20ms,cca=cubic",
        "rtt=20ms,cca=reno",
        "rtt=50ms,cca=cubic",
        "rtt=50ms,cca=reno",
    ]
    p = pts[1]
    assert p.coords == {"path.rtt": "20ms", "flow.0.cca": "reno"}
    assert p.values == {"path.rtt": "20ms", "flow.0.cca": "reno"}
    assert p.doc["path"]["rtt"] == "20ms" and p.doc["flow"][0]["cca"] == "reno"
    assert "sweep" not in p.doc
    # The base document is not modified.
    assert pts[0].doc["flow"][0] == {"name": "a", "cca": "cubic"}
    assert pts[3].doc["flow"][1]["cca"] == "reno"


def test_quoted_dotted_keys_and_flow_by_name():
    pts = sweep.expand(doc(**{"path.rtt": ["20ms", "40ms"], "flow.b.cca": ["cubic"]}))
    assert [p.doc["path"]["rtt"] for p in pts] == ["20ms", "40ms"]
    assert all(p.doc["flow"][1]["cca"] == "cubic" for p in pts)
    assert pts[0].origins == {"path.rtt": "path.rtt", "flow.1.cca": "flow.b.cca"}


def test_same_short_name_uses_whole_path():
    pts = sweep.expand(doc(flow={"0": {"cca": ["reno"]}, "1": {"cca": ["cubic"]}}))
    assert pts[0].label == "flow.0.cca=reno,flow.1.cca=cubic"


def test_zip_varies_fields_together_with_labels_and_name():
    d = doc(
        zip=[
            {
                "name": "client",
                "label": ["slow", "fast"],
                "path.rate": ["2Mbit", "1Gbit"],
                "flow.0.cca": ["reno", "cubic"],
            }
        ]
    )
    pts = sweep.expand(d)
    assert [p.label for p in pts] == ["client=slow", "client=fast"]
    assert [p.coords for p in pts] == [{"client": "slow"}, {"client": "fast"}]
    assert pts[1].doc["path"]["rate"] == "1Gbit" and pts[1].doc["flow"][0]["cca"] == "cubic"


def test_unnamed_zip_default_labels():
    pts = sweep.expand(doc(zip={"path.rate": ["2Mbit", "4Mbit"], "path.rtt": ["1s", "2s"]}))
    assert [p.label for p in pts] == ["rate=2Mbit,rtt=1s", "rate=4Mbit,rtt=2s"]
    assert pts[0].coords == {"zip0": "rate=2Mbit,rtt=1s"}


def test_zip_coords_give_several_coordinates():
    d = doc(
        zip={
            "name": "pair",
            "coords": {"c1": ["x", "x"], "c2": ["x", "y"]},
            "flow.0.cca": ["reno", "reno"],
            "flow.1.cca": ["reno", "cubic"],
        }
    )
    pts = sweep.expand(d)
    assert [p.label for p in pts] == ["c1=x,c2=x", "c1=x,c2=y"]
    assert pts[1].coords == {"pair": "c1=x,c2=y", "c1": "x", "c2": "y"}
    dims = sweep.dimensions(d)
    assert sweep.coordinate_names(dims) == ["pair", "c1", "c2"]


def test_product_times_zip_times_named_points():
    d = doc(
        path={"rtt": ["20ms", "40ms"]},
        zip={"name": "cc", "label": ["r", "c"], "flow.0.cca": ["reno", "cubic"]},
        point=[
            {"label": "short", "duration": "2s", "coords": {"len": "2"}},
            {"label": "long", "duration": "4s", "path": {"rate": "20Mbit"}, "coords": {"len": "4"}},
        ],
    )
    pts = sweep.expand(d)
    assert len(pts) == 2 * 2 * 2
    assert pts[0].label == "rtt=20ms,cc=r,short"
    assert pts[-1].label == "rtt=40ms,cc=c,long"
    assert pts[-1].doc["duration"] == "4s" and pts[-1].doc["path"]["rate"] == "20Mbit"
    assert pts[-1].doc["path"]["rtt"] == "40ms"
    assert pts[-1].coords == {"path.rtt": "40ms", "cc": "c", "point": "long", "len": "4"}
    assert [p.index for p in pts] == list(range(8))


def test_named_point_replaces_table_values_whole():
    d = doc(point=[{"label": "x", "flow": {"0": {"cca": {"name": "reno"}}}}])
    d["flow"][0]["cca"] = {"name": "cubic", "beta": 0.8}
    (p,) = sweep.expand(d)
    assert p.doc["flow"][0]["cca"] == {"name": "reno"}


def test_named_point_can_replace_the_flow_list():
    flows = [{"name": "x"}, {"name": "y"}, {"name": "z"}]
    (p,) = sweep.expand(doc(point=[{"label": "three", "flow": flows}]))
    assert [f["name"] for f in p.doc["flow"]] == ["x", "y", "z"]


def test_labels_are_directory_safe_and_unique():
    pts = sweep.expand(doc(path={"loss": [{"model": "bernoulli", "p": "1%"}, "2%"]}))
    assert pts[0].label == "loss=model=bernoulli_p=1_"
    assert pts[1].label == "loss=2_"
    for p in pts:
        assert "/" not in p.label and " " not in p.label
    with pytest.raises(ScenarioError, match="get the same label"):
        sweep.expand(doc(path={"rtt": ["1 s", "1_s"]}))


# ---------------------------------------------------------------------------------------------
# Errors name the field


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        ({"path": {"rtt": []}}, "sweep.path.rtt", "empty list"),
        ({"path": {"rtt": "20ms"}}, "sweep.path.rtt", "single value"),
        (
            {"zip": [{"path.rate": ["1Mbit", "2Mbit"], "path.rtt": ["1s"]}]},
            "sweep.zip.0.path.rtt",
            "has 1 values but path.rate has 2",
        ),
        ({"zip": [{"label": ["a"], "path.rate": ["1Mbit", "2Mbit"]}]}, "sweep.zip.0.label", "2"),
        ({"zip": [{"name": "z"}]}, "sweep.zip.0", "no fields"),
        (
            {"path": {"rtt": ["1s"]}, "zip": [{"path.rtt": ["2s"]}]},
            "sweep.zip.0",
            "path.rtt, which sweep.path.rtt sweeps too",
        ),
        ({"zip": {"label": ["a", "a"], "path.rate": ["1Mbit", "2Mbit"]}}, "sweep.zip.0", "same"),
        ({"point": "x"}, "sweep.point", "array of tables"),
        ({"point": [{"label": 3}]}, "sweep.point.0.label", "non-empty string"),
    ],
)
def test_spec_errors_name_the_sweep_field(spec, field, text):
    with pytest.raises(ScenarioError) as e:
        sweep.expand(doc(**spec), "f.toml")
    assert e.value.field == field
    assert text in str(e.value)
    assert str(e.value).startswith("f.toml: ")


def test_bad_value_is_reported_with_the_point(fake_catalog):
    d = doc(path={"rtt": ["20ms", "20lightyears"]})
    with pytest.raises(ScenarioError) as e:
        sweep.load_points(d, catalog=fake_catalog, file="f.toml")
    msg = str(e.value)
    assert msg.startswith("f.toml: path.rtt = '20lightyears' (from sweep point 'rtt=20lightyears')")


def test_unknown_field_is_reported_with_the_point(fake_catalog):
    d = doc(path={"rte": ["1Mbit"]})
    with pytest.raises(ScenarioError) as e:
        sweep.load_points(d, catalog=fake_catalog, file="f.toml")
    assert "path.rte" in str(e.value) and "did you mean 'rate'" in str(e.value)
    assert "sweep point 'rte=1Mbit'" in str(e.value)


def test_bad_path_into_flows_names_the_sweep_field():
    with pytest.raises(ScenarioError) as e:
        sweep.expand(doc(flow={"7": {"cca": ["reno"]}}), "f.toml")
    assert "flow.7" in str(e.value) and "only 2" in str(e.value)
    assert "sweep point 'cca=reno'" in str(e.value)


def test_scenario_load_refuses_an_unexpanded_sweep(fake_catalog):
    with pytest.raises(ScenarioError, match="declares a sweep"):
        tcplab.load(doc(path={"rtt": ["1s"]}), catalog=fake_catalog)


def test_report_table_is_kept_in_the_resolved_scenario(fake_catalog):
    d = dict(BASE, report={"id": "X1"})
    sc = tcplab.load(d, catalog=fake_catalog)
    assert sc.resolved["report"] == {"id": "X1"}


# ---------------------------------------------------------------------------------------------
# Loading and running


def test_overrides_apply_after_the_sweep(fake_catalog):
    d = doc(path={"rtt": ["20ms", "40ms"]})
    pts = sweep.load_points(d, overrides=["path.rtt=30ms"], trials=3, catalog=fake_catalog)
    assert [sc.path.rtt_ns for _, sc in pts] == [30_000_000, 30_000_000]
    assert all(sc.trials == 3 for _, sc in pts)


def test_load_points_from_a_file_names_it(tmp_path, fake_catalog):
    f = tmp_path / "sw.toml"
    f.write_text(
        'duration = "5s"\n[path]\nrate = "10Mbit"\n[[flow]]\nname = "a"\n'
        '[sweep]\npath.rtt = ["20ms", "50ms"]\n'
    )
    pts = sweep.load_points(f, catalog=fake_catalog)
    assert [sc.name for _, sc in pts] == ["sw", "sw"]
    assert pts[0][1].file == str(f)
    assert sweep.has_sweep(f)


def test_run_sweep_matches_single_runs_and_writes_outputs(fake, tmp_path):
    d = doc(path={"rtt": ["20ms", "50ms"]}, zip={"name": "cc", "flow.1.cca": ["reno", "cubic"]})
    loaded = sweep.load_points(d)
    res = sweep.run_sweep(loaded, out=tmp_path / "out", jobs=2)
    assert len(res.results) == 4
    for (p, sc), r in zip(loaded, res.results, strict=True):
        alone = tcplab.run(sc)
        assert (
            r.summary["groups"]["a"]["goodput_bps_trials"]
            == (alone.summary["groups"]["a"]["goodput_bps_trials"])
        )
        assert r.out == tmp_path / "out" / "points" / p.label
        assert (r.out / "summary.json").exists() and (r.out / "scenario.toml").exists()
    table = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert list(table["point"]) == [p.label for p, _ in loaded]
    assert list(table["cc"]) == ["cca=reno", "cca=cubic"] * 2
    for col in ("path.rtt", "a.goodput_mbps_mean", "b.goodput_mbps_sd", "jain", "trials"):
        assert col in table.columns
    first = res.results[0].summary["groups"]["a"]["goodput_bps"]["mean"] / 1e6
    assert table["a.goodput_mbps_mean"][0] == pytest.approx(first)
    meta = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert [p["label"] for p in meta["points"]] == list(table["point"])


def test_cli_run_sweep_prints_one_row_per_point(fake, tmp_path, capsys):
    f = tmp_path / "sw.toml"
    f.write_text(
        'duration = "5s"\ntrials = 2\n[path]\nrate = "10Mbit"\nrtt = "20ms"\n'
        '[[flow]]\nname = "a"\n[[flow]]\nname = "b"\n'
        '[[sweep.zip]]\nname = "n"\nlabel = ["one", "two"]\n"path.rate" = ["1Mbit", "2Mbit"]\n'
    )
    out = tmp_path / "o"
    assert main(["run", str(f), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line for line in text.splitlines() if line.startswith("n=")]
    assert [r.split()[0] for r in rows] == ["n=one", "n=two"]
    assert "sweep.csv" in text
    assert (out / "points" / "n=one" / "summary.json").exists()
    assert main(["validate", str(f)]) == 0
    assert "sweep of 2 point(s)" in capsys.readouterr().out


def test_cli_sweep_error_exit_2(fake, tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text('[path]\nrate = "10Mbit"\n[[flow]]\n[sweep]\npath.rtt = []\n')
    assert main(["run", str(f), "--out", str(tmp_path / "o")]) == 2
    assert "sweep.path.rtt" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_run_sweep_hands_rerun_invalid_to_every_kernel_trial(monkeypatch):
    from tcplab.errors import UserError

    seen = []

    def engine(config):
        seen.append(config["meta"]["kernel"]["rerun_invalid"])
        return synthetic_engine(config)

    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: engine)
    d = doc(path={"rtt": ["20ms", "50ms"]})
    d["engine"] = "kernel"
    sweep.run_sweep(sweep.load_points(d), jobs=1, rerun_invalid=3)
    assert seen == [3, 3, 3, 3]  # 2 points x 2 trials
    with pytest.raises(UserError, match="only the kernel engine marks a trial invalid"):
        sweep.run_sweep(sweep.load_points(doc(path={"rtt": ["20ms"]})), rerun_invalid=1)
