"""Link jitter (``path.jitter``; crates/tcplab-sim/src/link.rs "Jitter"): validation, the engine
config, what it does to two drop-tail flows in the simulator, how ``tcplab compare`` gives the
simulator the emulator's measured lateness, and the kernel engine applying it (root only)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from conftest import kernel_srtt_of_window_limited_reno
from tcplab import ScenarioError, engines
from tcplab.kernel.compare import MIN_LATENESS_SAMPLES, with_emulator_jitter
from tcplab.scenario import load
from tcplab.seeds import trial_seed

MS = 1_000_000
S = 1_000_000_000

TWO_RENO = {
    "name": "two-reno",
    "seed": 1,
    "duration": "20s",
    "path": {"rate": "100Mbit", "rtt": "20ms", "queue": "bdp"},
    "flow": [{"name": "reno", "cca": "reno", "streams": 2}],
}


def scenario(**path):
    d = copy.deepcopy(TWO_RENO)
    d["path"].update(path)
    return d


def error(d) -> str:
    with pytest.raises(ScenarioError) as e:
        load(d, file="s.toml", catalog=engines.catalog("sim"))
    return str(e.value)


def test_path_jitter_renders_on_the_bottleneck_only():
    sc = load(scenario(jitter="50us"), catalog=engines.catalog("sim"))
    links = sc.config(1)["links"]
    bn = links[0]
    assert bn["ab"]["jitter"] == {"model": "uniform", "max_ns": 50_000}
    assert bn["ba"]["jitter"] == {"model": "uniform", "max_ns": 50_000}
    assert all("jitter" not in lk[d] for lk in links[1:] for d in ("ab", "ba"))
    # The reverse direction defaults to the forward one and can differ.
    sc = load(scenario(jitter="50us", reverse={"jitter": "0s"}), catalog=engines.catalog("sim"))
    bn = sc.config(1)["links"][0]
    assert "jitter" in bn["ab"] and "jitter" not in bn["ba"]
    # None by default: the engine config is what it was before jitter existed.
    bn = load(scenario(), catalog=engines.catalog("sim")).config(1)["links"][0]
    assert "jitter" not in bn["ab"] and "jitter" not in bn["ba"]


def test_path_jitter_errors_name_field_value_and_fix():
    msg = error(scenario(jitter="20s"))
    assert "s.toml" in msg and "path.jitter" in msg and "20s" in msg and "10 s" in msg
    msg = error(scenario(jitter="fast"))
    assert "path.jitter" in msg and "fast" in msg
    msg = error(scenario(reverse={"jitter": "11s"}))
    assert "path.reverse.jitter" in msg


def run_trials(doc, n):
    sc = load(doc, catalog=engines.catalog("sim"))
    out = []
    for k in range(n):
        raw = engines.get_engine("sim")(sc.config(trial_seed(sc.seed, k)))
        out.append(
            (
                [f["bytes_delivered"] * 8 / 20 for f in raw["flows"]],
                sum(f["retransmits"] for f in raw["flows"]),
            )
        )
    return out


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def test_jitter_breaks_the_phase_lock_of_two_drop_tail_flows():
    # Without jitter the scenario has nothing random: every trial is the same run.
    still = run_trials(scenario(), 4)
    assert all(t == still[0] for t in still)
    # With jitter of up to one bottleneck service time (1500 B at 100 Mbit/s: 120 µs; Floyd &
    # Jacobson 1992), which flow loses at an overflow is left to chance: trials differ, and over
    # a 20 s run the two Reno flows' shares drift apart in some of them.
    moved = run_trials(scenario(jitter="120us"), 6)
    shares = [t[0] for t in moved]
    assert len({tuple(s) for s in shares}) >= 5, shares
    assert min(jain(s) for s in shares) < min(jain(t[0]) for t in still)
    # The bottleneck stays full: the flows' sum moves by under 1 % of 100 Mbit/s.
    base_sum = sum(still[0][0])
    assert all(abs(sum(s) - base_sum) < 1e6 for s in shares), (base_sum, shares)


def _kern(lanes):
    return {"kernel": {"emulator": {"links": lanes}}}


def _lateness(cdf, count=1000):
    v = [a for a, _ in cdf]
    return {"count": count, "mean_ns": float(np.mean(v)), "p99_ns": v[-2], "cdf": cdf}


def test_compare_gives_the_simulator_the_measured_lateness():
    sc = load(scenario(reverse={"jitter": "40us"}), catalog=engines.catalog("sim"))
    cfg = sc.config(1)
    uniform = [[10_000, 0.0], [110_000, 1.0]]  # uniform 10-110 µs
    kern = _kern(
        [
            # The own lateness (one sample per late wake-up) is what is applied, not that of
            # every packet (which counts a late wake-up once per packet it held back).
            {
                "name": "bottleneck",
                "dir": "ab",
                "lateness": _lateness([[30_000, 0.0], [330_000, 1.0]]),
                "own_lateness": _lateness(uniform),
            },
            {"name": "bottleneck", "dir": "ba", "own_lateness": _lateness(uniform)},
            # Too few samples to be a distribution: left alone.
            {"name": cfg["links"][1]["name"], "dir": "ab", "own_lateness": _lateness(uniform, 5)},
        ]
    )
    out, applied = with_emulator_jitter(cfg, kern)
    assert cfg["links"][0]["ab"].get("jitter") is None  # the input is not modified
    assert out["links"][0]["ab"]["jitter"] == {"model": "empirical", "cdf": uniform}
    # The scenario's own jitter (uniform 0-40 µs, applied by the emulator too) is added to the
    # measured lateness: the sum runs from 10 to 150 µs with its median at 60 + 20 µs.
    ba = out["links"][0]["ba"]["jitter"]["cdf"]
    v = [a for a, _ in ba]
    p = [b for _, b in ba]
    assert v == sorted(v) and p == sorted(p) and p[0] == 0.0 and p[-1] == 1.0
    assert abs(np.interp(0.5, p, v) - 80_000) < 1_000
    assert 10_000 <= v[0] < 10_100 and 149_900 < v[-1] <= 150_000
    assert "jitter" not in out["links"][1]["ab"]
    assert set(applied) == {"bottleneck.ab", "bottleneck.ba"}
    assert applied["bottleneck.ab"]["lateness_mean_us"] == pytest.approx(60.0)
    assert MIN_LATENESS_SAMPLES > 5
    # The simulator accepts the result and runs it.
    raw = engines.get_engine("sim")(out)
    assert raw["flows"][0]["bytes_delivered"] > 0


def test_compare_models_the_emulator_thread_where_it_was_measured():
    """A kernel run that measured the emulator thread's timing (wake-up lateness, send gaps)
    gives the simulator one thread serving every emulated direction without jitter of its own
    (crates/tcplab-sim/src/emuthread.rs); a direction with the scenario's own jitter keeps the
    per-direction model; `model="lanes"` keeps the per-direction model everywhere."""
    sc = load(scenario(reverse={"jitter": "40us"}), catalog=engines.catalog("sim"))
    cfg = sc.config(1)
    uniform = [[10_000, 0.0], [110_000, 1.0]]
    names = [(lk["name"], d) for lk in cfg["links"] for d in ("ab", "ba")]
    kern = _kern([{"name": n, "dir": d, "own_lateness": _lateness(uniform)} for n, d in names])
    wake, gap = [[5_000, 0.0], [45_000, 1.0]], [[3_000, 0.0], [14_000, 1.0]]
    kern["kernel"]["emulator"]["thread"] = {
        "wakeup_lateness": _lateness(wake),
        "send_gap": _lateness(gap),
    }
    out, applied = with_emulator_jitter(cfg, kern)
    th = out["emulator_thread"]
    assert th["wakeup"] == {"model": "empirical", "cdf": wake}
    assert th["send_gap"] == {"model": "empirical", "cdf": gap}
    # Every emulated direction but the one with jitter of its own (bottleneck.ba: 40 µs).
    assert set(th["channels"]) == {f"{n}.{d}" for n, d in names} - {"bottleneck.ba"}
    assert all(
        "jitter" not in lk[d]
        for lk in out["links"]
        for d in ("ab", "ba")
        if f"{lk['name']}.{d}" in th["channels"]
    )
    assert out["links"][0]["ba"]["jitter"]["model"] == "empirical"  # own 40 µs + measured
    assert set(applied) == {
        "emulator thread, wake-up",
        "emulator thread, send gap",
        "bottleneck.ba",
    }
    assert engines.get_engine("sim")(out)["flows"][0]["bytes_delivered"] > 0
    lanes, applied = with_emulator_jitter(cfg, kern, model="lanes")
    assert "emulator_thread" not in lanes and "bottleneck.ab" in applied


def test_simulator_rejects_a_bad_emulator_thread_naming_the_field():
    sc = load(scenario(), catalog=engines.catalog("sim"))
    cfg = sc.config(1)
    fixed = {"model": "empirical", "cdf": [[10_000, 0.0], [10_000, 1.0]]}
    cfg["emulator_thread"] = {"channels": ["nowhere.ab"], "wakeup": fixed, "send_gap": fixed}
    with pytest.raises(Exception) as e:
        engines.get_engine("sim")(cfg)
    assert "emulator_thread.channels[0]" in str(e.value) and "nowhere.ab" in str(e.value)
    cfg["emulator_thread"]["channels"] = ["bottleneck.ab"]
    cfg["links"][0]["ab"]["jitter"] = {"model": "uniform", "max_ns": 1000}
    with pytest.raises(Exception) as e:
        engines.get_engine("sim")(cfg)
    assert "has jitter or a tick of its own" in str(e.value)
    del cfg["links"][0]["ab"]["jitter"]
    cfg["emulator_thread"]["send_gap"] = {"model": "empirical", "cdf": [[0, 0.0], [5, 0.5]]}
    with pytest.raises(Exception) as e:
        engines.get_engine("sim")(cfg)
    assert "emulator_thread.send_gap.cdf" in str(e.value)


def test_simulator_rejects_bad_jitter_naming_the_field():
    sc = load(scenario(), catalog=engines.catalog("sim"))
    cfg = sc.config(1)
    cdf = [[0, 0.0], [50, 0.5], [40, 1.0]]
    cfg["links"][0]["ba"]["jitter"] = {"model": "empirical", "cdf": cdf}
    with pytest.raises(Exception) as e:
        engines.get_engine("sim")(cfg)
    assert "links[0].ba.jitter.cdf[2]" in str(e.value)


def test_kernel_engine_applies_path_jitter(kernel_run):
    # A window-limited flow on 10 Mbit/s, 40 ms: without jitter the kernel's smoothed RTT is
    # 40-48 ms (tests/test_schedule.py); the emulator adds up to 20 ms each way (uniform, order
    # kept), and the kernel's srtt grows by more than half the 20 ms mean of the two draws.
    d = scenario(rate="10Mbit", rtt="40ms", queue="100pkt", jitter="20ms")
    srtt = kernel_srtt_of_window_limited_reno(kernel_run, dict(d, duration="4s"))
    assert 58 * MS <= srtt[3 * S] < 100 * MS, srtt
