"""tcplab.run with a synthetic engine: trial order, parallelism, determinism, validation first."""

from __future__ import annotations

import sys
import threading

import pandas as pd
import pytest

import tcplab
import tcplab.engines
from conftest import synthetic_engine
from tcplab.errors import EngineError, EngineUnavailable, OutputError
from tcplab.seeds import trial_seeds

DOC = {
    "name": "r",
    "duration": "5s",
    "path": {"rate": "10Mbit", "rtt": "20ms", "loss": "1%"},
    "flow": [{"name": "a", "streams": 2}, {"name": "b", "cca": "reno"}],
}


@pytest.fixture
def fake_engine(monkeypatch, fake_catalog):
    calls: list[int] = []
    threads: set[str] = set()
    lock = threading.Lock()

    def engine(cfg):
        with lock:
            calls.append(cfg["seed"])
            threads.add(threading.current_thread().name)
        return synthetic_engine(cfg)

    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: engine)
    engine.calls = calls  # type: ignore[attr-defined]
    engine.threads = threads  # type: ignore[attr-defined]
    return engine


def no_wall(summary):
    return {k: v for k, v in summary.items() if k != "wall_seconds"}


def test_trials_use_documented_seeds_in_order(fake_engine):
    res = tcplab.run(DOC, trials=5, seed=9, jobs=3)
    assert res.seeds == trial_seeds(9, 5)
    assert [c["seed"] for c in res.configs] == trial_seeds(9, 5)
    assert sorted(fake_engine.calls) == sorted(trial_seeds(9, 5))
    assert [r["flows"][0]["bytes_delivered"] for r in res.raw] == [
        synthetic_engine(c)["flows"][0]["bytes_delivered"] for c in res.configs
    ]
    assert res.out is None


def test_parallel_equals_sequential(fake_engine):
    par = tcplab.run(DOC, trials=6, jobs=4)
    assert any(t.startswith("tcplab") for t in fake_engine.threads)
    seq = tcplab.run(DOC, trials=6, jobs=1)
    assert no_wall(par.summary) == no_wall(seq.summary)
    pd.testing.assert_frame_equal(par.timeseries, seq.timeseries)
    pd.testing.assert_frame_equal(par.queues, seq.queues)


def test_same_seed_same_result_other_seed_differs(fake_engine, tmp_path):
    a = tcplab.run(DOC, trials=2, out=tmp_path / "a")
    b = tcplab.run(DOC, trials=2, out=tmp_path / "b")
    assert no_wall(a.summary) == no_wall(b.summary)
    for f in ("timeseries.parquet", "queues.parquet"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    c = tcplab.run(DOC, trials=2, seed=2)
    assert c.summary["flows"]["b"]["goodput_bps"] != a.summary["flows"]["b"]["goodput_bps"]


def test_progress_callback(fake_engine):
    seen = []
    tcplab.run(DOC, trials=4, jobs=2, progress=lambda d, n: seen.append((d, n)))
    assert sorted(seen) == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_progress_bar_writes_to_stderr(fake_engine, capsys):
    tcplab.run(DOC, trials=3, progress=True)
    err = capsys.readouterr().err
    assert "3/3 trials" in err and err.endswith("\n")


def test_engine_rejection_names_trial_and_seed(monkeypatch, fake_catalog):
    def engine(cfg):
        if cfg["seed"] == trial_seeds(1, 3)[2]:
            raise ValueError("flow 'a': bad knob")
        return synthetic_engine(cfg)

    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: engine)
    with pytest.raises(EngineError) as info:
        tcplab.run(DOC, trials=3, jobs=2)
    msg = str(info.value)
    assert f"trial 2 (seed {trial_seeds(1, 3)[2]})" in msg and "bad knob" in msg


def test_validation_and_output_checks_happen_before_any_trial(fake_engine, tmp_path):
    with pytest.raises(tcplab.ScenarioError):
        tcplab.run(DOC, overrides=["flow.0.cca=nope"])
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    with pytest.raises(OutputError):
        tcplab.run(DOC, out=full)
    assert fake_engine.calls == []


def test_run_from_file_with_overrides(fake_engine, tmp_path):
    from tomli_w import dumps

    p = tmp_path / "exp.toml"
    p.write_text(dumps(DOC))
    res = tcplab.run(p, overrides=["flow.b.cca=cubic", "path.rate=20Mbit"], trials=2)
    assert res.summary["file"] == str(p)
    assert res.summary["flows"]["b"]["cca"] == "cubic"
    assert res.configs[0]["links"][0]["ab"]["rate_bps"] == 20_000_000
    assert res.summary["scenario"]["trials"] == 2


def test_kernel_engine_missing_is_a_clear_error(monkeypatch):
    # Unimportable even if another test imported it already (then it is a package attribute).
    monkeypatch.setitem(sys.modules, "tcplab.kernel", None)
    monkeypatch.delattr(tcplab, "kernel", raising=False)
    with pytest.raises(EngineUnavailable, match="kernel engine"):
        tcplab.engines.get_engine("kernel")
    assert tcplab.engines.parallel_ok("sim") and not tcplab.engines.parallel_ok("kernel")


def test_kernel_engine_gets_the_config_dict_and_runs_trials_in_order(monkeypatch, fake_catalog):
    import types

    seen = []
    mod = types.ModuleType("tcplab.kernel")

    def run(cfg):
        seen.append((threading.current_thread().name, cfg["seed"]))
        assert isinstance(cfg, dict)
        return synthetic_engine(cfg)

    mod.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tcplab.kernel", mod)
    monkeypatch.setattr(tcplab, "kernel", mod, raising=False)
    res = tcplab.run(DOC, trials=3, engine="kernel", jobs=4)
    assert [s for _, s in seen] == trial_seeds(1, 3)
    assert {t for t, _ in seen} == {threading.current_thread().name}
    assert res.summary["engine"] == "kernel"
