"""The command line, in-process, with the fake catalog and the synthetic engine."""

from __future__ import annotations

import json

import pytest

import tcplab.catalog
import tcplab.engines
from conftest import ROOT, synthetic_engine
from tcplab.cli import main
from tcplab.errors import EngineUnavailable


@pytest.fixture
def fake(monkeypatch, fake_catalog):
    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: synthetic_engine)
    return fake_catalog


def scenario(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


GOOD = """
name = "cli"
duration = "5s"
trials = 2
[path]
rate = "10Mbit"
rtt = "20ms"
[[flow]]
name = "bulk"
streams = 2
[[flow]]
name = "u"
kind = "udp"
rate = "1Mbit"
"""


def test_validate_prints_ok_and_topology(fake, tmp_path, capsys):
    assert main(["validate", str(scenario(tmp_path, GOOD))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ")
    assert "bottleneck r1->r2: 10 Mbit/s" in out
    assert "bulk.0 [bulk] tcp cubic: bulk.snd -> bulk.rcv" in out
    assert "u [u] udp 1 Mbit/s" in out


def test_run_prints_summary_and_writes_results(fake, tmp_path, capsys):
    out_dir = tmp_path / "out"
    rc = main(["run", str(scenario(tmp_path, GOOD)), "--out", str(out_dir), "--set", "seed=4"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "bulk.0" in out and "[SUM] bulk" in out and "aggregate goodput" in out
    assert "Jain fairness index" not in out  # only one TCP group
    assert f"results: {out_dir.absolute()}" in out
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["seed"] == 4 and summary["trials"] == 2
    for f in ("timeseries.parquet", "queues.parquet", "goodput.png", "cwnd.png", "scenario.toml"):
        assert (out_dir / f).exists()


def test_run_quiet_prints_only_the_directory(fake, tmp_path, capsys):
    out_dir = tmp_path / "q"
    assert main(["run", str(scenario(tmp_path, GOOD)), "--out", str(out_dir), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(out_dir.absolute())


def test_run_default_out_dir(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(scenario(tmp_path, GOOD)), "--trials", "1"]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("cli-") and (run / "summary.json").exists()


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--set", "flow.0.cca=cubci"], ["flow.0.cca", "did you mean 'cubic'", "--set"]),
        (["--set", "path.rate"], ["expected FIELD=VALUE"]),
        (["--trials", "0"], ["trials", "--trials 0"]),
        (["--seed", "-3"], ["seed", "out of range"]),
    ],
)
def test_bad_input_exits_2_with_message(fake, tmp_path, capsys, args, fragments):
    rc = main(["run", str(scenario(tmp_path, GOOD)), "--out", str(tmp_path / "o"), *args])
    assert rc == 2
    cap = capsys.readouterr()
    assert cap.err.startswith("tcplab: error: ")
    assert "Traceback" not in cap.err
    for frag in fragments:
        assert frag in cap.err, (frag, cap.err)
    assert not (tmp_path / "o").exists()


def test_invalid_scenario_file_exits_2(fake, tmp_path, capsys):
    p = scenario(tmp_path, GOOD.replace('rate = "10Mbit"', 'rate = "10Mbt"'))
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: path.rate = '10Mbt': unknown unit 'Mbt' (did you mean 'Mbit'?)" in err


def test_existing_output_exits_2(fake, tmp_path, capsys):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("x")
    assert main(["run", str(scenario(tmp_path, GOOD)), "--out", str(tmp_path / "o")]) == 2
    assert "not empty" in capsys.readouterr().err


def test_engine_rejection_exits_2(monkeypatch, fake_catalog, tmp_path, capsys):
    def engine(cfg):
        raise ValueError("link 'bottleneck': rate_bps must be > 0")

    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: engine)
    assert main(["run", str(scenario(tmp_path, GOOD)), "--out", str(tmp_path / "o")]) == 2
    assert "rejected the config" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_missing_core_exits_1(monkeypatch, tmp_path, capsys):
    def no_core():
        raise EngineUnavailable("the simulator extension tcplab._core is not built")

    monkeypatch.setattr(tcplab.catalog, "_cached", None)
    monkeypatch.setattr(tcplab.catalog, "load_core", no_core)
    assert main(["validate", str(scenario(tmp_path, GOOD))]) == 1
    assert "not built" in capsys.readouterr().err


def test_list(fake, capsys):
    assert main(["list", "ccas"]) == 0
    out = capsys.readouterr().out
    assert "cubic: CUBIC [RFC 9438]" in out and "    beta (float, default 0.7)" in out
    assert main(["list", "knobs"]) == 0
    out = capsys.readouterr().out
    assert "min_rto (duration, default 200ms)" in out
    assert "recovery (choice {sack|newreno|reno}" in out


def test_bench_rejects_unknown_names(fake, capsys):
    assert main(["bench", "--only", "s1,s9"]) == 2
    assert "s9" in capsys.readouterr().err


def test_shipped_scenarios_validate_via_cli(fake, capsys):
    for p in sorted((ROOT / "scenarios").glob("*.toml")):
        assert main(["validate", str(p)]) == 0, p


def test_run_command_maps_errors_to_exit_statuses(capsys):
    # One mapping for every command (tcplab, tcplab trace): message on stderr, no traceback.
    from tcplab.errors import UserError, run_command

    def raising(exc):
        def command():
            raise exc

        return command

    assert run_command(lambda: 3) == 3
    assert run_command(raising(UserError("bad value"))) == 2
    assert "tcplab: error: bad value" in capsys.readouterr().err
    assert run_command(raising(EngineUnavailable("no core"))) == 1
    assert "tcplab: no core" in capsys.readouterr().err
    assert run_command(raising(KeyboardInterrupt())) == 130
    assert "interrupted" in capsys.readouterr().err
    with pytest.raises(ZeroDivisionError):  # a bug is not an input error: it propagates
        run_command(lambda: 1 // 0)


def test_run_says_when_a_kernel_run_was_invalid_or_rerun(monkeypatch, tmp_path, capsys):
    def engine(config):
        raw = synthetic_engine(config)
        first = config["seed"] == trial_seed_0[0]
        raw["valid"] = not first
        raw["invalid_reasons"] = ["link bn ab: 1 % of packets left 3.40 ms late"] if first else []
        raw["kernel"] = {"discarded_attempts": [] if first else [["late"], ["drops"]]}
        return raw

    from tcplab.seeds import trial_seeds

    trial_seed_0 = trial_seeds(4, 2)
    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: engine)
    f = scenario(tmp_path, GOOD)
    rc = main(
        ["run", str(f), "--engine", "kernel", "--set", "seed=4", "--out", str(tmp_path / "o")]
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "1 kernel attempt(s) marked invalid and run again" not in out  # 2 attempts, 1 trial
    assert "2 kernel attempt(s) marked invalid and run again" in out
    assert "INVALID: the link emulator missed the configured path (1 check(s) failed" in out
    assert "3.40 ms late" in out
    # A valid run with nothing discarded prints neither line.
    monkeypatch.setattr(tcplab.engines, "get_engine", lambda name: synthetic_engine)
    main(["run", str(f), "--engine", "kernel", "--out", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert "INVALID" not in out and "marked invalid" not in out
    # Nothing was simulated on the kernel: its packet count is what the hosts delivered.
    assert "data packets delivered" in out and "simulated" not in out
    main(["run", str(f), "--out", str(tmp_path / "q")])
    assert "simulated data packets" in capsys.readouterr().out
