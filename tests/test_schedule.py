"""Time-varying paths (``[[path.schedule]]``, python/tcplab/scenario/schedule.py): validation with
errors naming file, field, value and fix; the engine config it renders; and end to end in both
engines (the kernel engine's tests run as root only, and check that no namespace is left
behind)."""

from __future__ import annotations

import copy

import pytest

from conftest import kernel_srtt_of_window_limited_reno, needs_core
from tcplab import ScenarioError, engines
from tcplab.scenario import load

S = 1_000_000_000
MS = 1_000_000

BASE = {
    "name": "sched",
    "duration": "10s",
    "path": {"rate": "10Mbit", "rtt": "40ms", "queue": "100pkt"},
    "flow": [{"name": "u", "kind": "udp", "rate": "20Mbit", "payload": "1472B"}],
}


def doc(*steps, **top):
    d = copy.deepcopy(BASE)
    d["path"]["schedule"] = list(steps)
    d.update(top)
    return d


def bottleneck(sc):
    return sc.config(1)["links"][0]


def error(d) -> str:
    with pytest.raises(ScenarioError) as e:
        load(d, file="s.toml", catalog=engines.catalog("sim"))
    return str(e.value)


# ---------------------------------------------------------------------------------------------
# Validation and the engine config


def test_schedule_renders_each_direction():
    sc = load(
        doc(
            {"at": "2s", "rate": "5Mbit"},
            {"at": "4s", "loss": "1%", "reverse_rate": "2Mbit"},
            {"at": "6s", "rtt": "100ms"},
            {"at": "8s", "delay": "1ms", "reverse_loss": {"model": "list", "packets": [3]}},
        ),
        catalog=engines.catalog("sim"),
    )
    bn = bottleneck(sc)
    # rtt 40 ms → 100 ms moves the bottleneck's one-way delay by 30 ms (19.8 → 49.8 ms).
    assert bn["ab"]["delay_ns"] == 19_800_000
    assert bn["ab"]["schedule"] == [
        {"at_ns": 2 * S, "rate_bps": 5_000_000},
        {"at_ns": 4 * S, "loss": {"model": "bernoulli", "p": 0.01}},
        {"at_ns": 6 * S, "delay_ns": 49_800_000},
        {"at_ns": 8 * S, "delay_ns": 1 * MS},
    ]
    assert bn["ba"]["schedule"] == [
        {"at_ns": 4 * S, "rate_bps": 2_000_000},
        {"at_ns": 6 * S, "delay_ns": 49_800_000},
        {"at_ns": 8 * S, "delay_ns": 1 * MS, "loss": {"model": "list", "packets": [3]}},
    ]
    # Access links never change; the resolved scenario keeps the steps as written.
    assert all("schedule" not in lk["ab"] for lk in sc.config(1)["links"][1:])
    assert sc.resolved["path"]["schedule"][0] == {"at": "2s", "rate": "5Mbit"}
    assert "at 6 s: delay 49.8 ms" in sc.topology_text()
    # Reading the resolved scenario back gives the same config.
    again = load(sc.resolved, catalog=engines.catalog("sim"))
    assert bottleneck(again) == bn


def test_no_schedule_leaves_the_config_unchanged():
    sc = load(copy.deepcopy(BASE), catalog=engines.catalog("sim"))
    assert "schedule" not in bottleneck(sc)["ab"] and "schedule" not in bottleneck(sc)["ba"]


@pytest.mark.parametrize(
    ("steps", "field", "words"),
    [
        ([{"at": "10s", "rate": "1Mbit"}], "path.schedule.0.at = '10s'", "not before the end"),
        ([{"at": "0s", "rate": "1Mbit"}], "path.schedule.0.at = '0s'", "more than zero"),
        (
            [{"at": "3s", "rate": "1Mbit"}, {"at": "2s", "rate": "2Mbit"}],
            "path.schedule.1.at = '2s'",
            "not after the previous step's time (path.schedule.0.at = 3s)",
        ),
        ([{"at": "3s"}], "path.schedule.0 = {'at': '3s'}", "changes nothing"),
        ([{"rate": "1Mbit"}], "path.schedule.0.at", "missing (required)"),
        ([{"at": "3s", "rate": "0"}], "path.schedule.0.rate = '0'", "more than zero"),
        ([{"at": "3s", "loss": "2"}], "path.schedule.0.loss = '2'", "more than 1"),
        ([{"at": "3s", "rtt": "0.2ms"}], "path.schedule.0.rtt = '0.2ms'", "negative"),
        (
            [{"at": "3s", "rtt": "90ms", "delay": "5ms"}],
            "path.schedule.0.rtt",
            "together with delay",
        ),
        ([{"at": "3s", "rtae": "1Mbit"}], "path.schedule.0.rtae", "did you mean 'rate'"),
    ],
)
def test_schedule_errors_name_file_field_value_and_fix(steps, field, words):
    msg = error(doc(*steps))
    assert msg.startswith(f"s.toml: {field}"), msg
    assert words in msg and "Allowed:" in msg, msg


def test_schedule_must_be_an_array_of_tables():
    d = copy.deepcopy(BASE)
    d["path"]["schedule"] = {"at": "1s", "rate": "1Mbit"}
    assert "path.schedule = " in error(d) and "array of tables" in error(d)


def test_rtt_step_below_the_access_share_is_refused_with_the_minimum():
    # Path RTT 40 ms over access links of 0.1 ms each way: at least 0.4 ms.
    msg = error(doc({"at": "3s", "rtt": "0.3ms"}))
    assert msg.endswith("Allowed: at least 400us"), msg


# ---------------------------------------------------------------------------------------------
# The simulator, end to end


def _goodput(raw, lo_s, hi_s):
    s = raw["series"]
    v = [g for t, g in zip(s["time_ns"], s["goodput_bps"], strict=True) if lo_s * S < t <= hi_s * S]
    return sum(v) / len(v)


@needs_core
def test_sim_rate_step_halves_goodput_and_queue_series_follow():
    run = engines.get_engine("sim")
    sc = load(doc({"at": "5s", "rate": "5Mbit"}), catalog=engines.catalog("sim"))
    raw = run(sc.config(1))
    payload = 1472 / 1500
    assert _goodput(raw, 1, 5) == pytest.approx(10e6 * payload, rel=0.01)
    assert _goodput(raw, 6, 10) == pytest.approx(5e6 * payload, rel=0.01)
    # The overloaded queue stays full throughout; utilisation (serialisation admitted in the
    # interval) stays 1 to within one packet's serialisation time (2.4 ms at 5 Mbit/s).
    q = raw["queue_series"]
    ab = [i for i, d in enumerate(q["dir"]) if d == "ab"]
    assert all(q["utilization"][i] == pytest.approx(1.0, abs=0.0024) for i in ab), q
    assert all(q["queue_pkts"][i] >= 99 for i in ab)
    # Drops per interval: 20 Mbit/s of 1472-byte payloads offered, 10 then 5 Mbit/s of
    # 1500-byte packets served.
    drops = [q["drops"][i] for i in ab]
    offered = 20e6 / (8 * 1472)
    assert sum(drops[1:5]) / 4 == pytest.approx(offered - 10e6 / (8 * 1500), rel=0.01)
    assert sum(drops[6:]) / 4 == pytest.approx(offered - 5e6 / (8 * 1500), rel=0.01)
    # Deterministic: the same config gives the same result.
    assert run(sc.config(1))["series"] == raw["series"]


@needs_core
def test_sim_rtt_step_shows_in_srtt():
    d = doc({"at": "5s", "rtt": "120ms"})
    # Window-limited (no standing queue); the receiver ACKs every segment, so RTT samples are
    # the base RTT plus one data packet's serialisation (1.2 ms at 10 Mbit/s) and little else.
    d["flow"] = [
        {"name": "t", "cca": "reno", "window": "20KB", "receiver_tcp": {"delayed_ack": False}}
    ]
    sc = load(d, catalog=engines.catalog("sim"))
    raw = engines.get_engine("sim")(sc.config(1))
    s = raw["series"]
    srtt = dict(zip(s["time_ns"], s["srtt_ns"], strict=True))
    assert 41 * MS < srtt[4 * S] < 42.5 * MS, srtt
    assert 121 * MS < srtt[9 * S] < 122.5 * MS, srtt


@needs_core
def test_sim_loss_step_loses_from_its_time():
    sc = load(doc({"at": "5s", "loss": "10%"}), catalog=engines.catalog("sim"))
    raw = engines.get_engine("sim")(sc.config(1))
    q = raw["queue_series"]
    lost = {t: n for t, n, d in zip(q["time_ns"], q["lost"], q["dir"], strict=True) if d == "ab"}
    assert sum(n for t, n in lost.items() if t <= 5 * S) == 0
    after = sum(n for t, n in lost.items() if t > 5 * S)
    # 833 packets/s admitted for 5 s, 10 % lost: 417 ± 5 SD (SD ≈ 19).
    assert abs(after - 417) < 100, after


# ---------------------------------------------------------------------------------------------
# The kernel engine (root only; fixture kernel_run in conftest.py)


@needs_core
def test_kernel_rate_step_halves_udp_goodput(kernel_run):
    d = doc({"at": "3s", "rate": "5Mbit"}, duration="7s", engine="kernel")
    d["flow"][0]["rate"] = "8Mbit"
    sc = load(d, catalog=engines.catalog("sim"))
    raw = kernel_run(sc.config(1))
    assert raw["valid"], raw["invalid_reasons"]
    payload = 1472 / 1500
    # 8 Mbit/s offered: all of it before the step (below 10 Mbit/s), 5 Mbit/s after.
    assert _goodput(raw, 1, 3) == pytest.approx(8e6, rel=0.05)
    assert _goodput(raw, 4, 7) == pytest.approx(5e6 * payload, rel=0.05)
    bn = next(x for x in raw["links"] if x["name"] == "bottleneck" and x["dir"] == "ab")
    assert bn["drops"] > 0  # the queue overflowed only after the step


@needs_core
def test_kernel_loss_step_loses_from_its_time(kernel_run):
    d = doc({"at": "2s", "loss": "5%"}, duration="6s", engine="kernel")
    d["flow"][0]["rate"] = "4Mbit"
    sc = load(d, catalog=engines.catalog("sim"))
    raw = kernel_run(sc.config(1))
    assert raw["valid"], raw["invalid_reasons"]
    q = raw["queue_series"]
    lost = {t: n for t, n, dd in zip(q["time_ns"], q["lost"], q["dir"], strict=True) if dd == "ab"}
    assert sum(n for t, n in lost.items() if t <= 2 * S) == 0
    after = sum(n for t, n in lost.items() if t > 2 * S)
    # About 340 packets/s for 4 s at 5 %: 68 ± 5 SD (SD ≈ 8).
    assert 28 < after < 108, after


@needs_core
def test_kernel_rtt_step_shows_in_srtt(kernel_run):
    d = doc({"at": "3s", "rtt": "100ms"}, duration="7s", engine="kernel")
    srtt = kernel_srtt_of_window_limited_reno(kernel_run, d)
    # Window-limited: the base RTT (40 ms, then 100 ms) plus serialisation and a little
    # emulator and stack latency.
    assert 40 * MS <= srtt[2 * S] < 48 * MS, srtt
    assert 100 * MS <= srtt[6 * S] < 108 * MS, srtt
