"""Timer ticks of a tick-driven emulator (``path.tick``; crates/tcplab-sim/src/link.rs "Timer
ticks", after FreeBSD Dummynet): validation, the engine config, and what it does end to end —
RTT samples grow by the ticks a packet waits, the bottleneck rate is kept."""

from __future__ import annotations

import copy

import pytest

from tcplab import ScenarioError, engines
from tcplab.scenario import load

MS = 1_000_000

BASE = {
    "name": "tick",
    "seed": 1,
    "duration": "5s",
    "interval": "100ms",
    "path": {"rate": "100Mbit", "rtt": "20ms", "queue": "100pkt"},
    "flow": [{"name": "sized", "cca": "reno", "bytes": "1000B"}],
}


def scenario(path=None, flow=None):
    d = copy.deepcopy(BASE)
    d["path"].update(path or {})
    if flow is not None:
        d["flow"] = flow
    return d


def error(d) -> str:
    with pytest.raises(ScenarioError) as e:
        load(d, file="s.toml", catalog=engines.catalog("sim"))
    return str(e.value)


def run(d):
    sc = load(d, catalog=engines.catalog("sim"))
    return engines.get_engine("sim")(sc.config(1))


def test_path_tick_renders_on_the_bottleneck_only():
    links = load(scenario({"tick": "10ms"}), catalog=engines.catalog("sim")).config(1)["links"]
    assert links[0]["ab"]["tick_ns"] == 10 * MS and links[0]["ba"]["tick_ns"] == 10 * MS
    assert all("tick_ns" not in lk[d] for lk in links[1:] for d in ("ab", "ba"))
    sc = load(scenario({"tick": "10ms", "reverse": {"tick": "0s"}}), catalog=engines.catalog("sim"))
    bn = sc.config(1)["links"][0]
    assert bn["ab"]["tick_ns"] == 10 * MS and "tick_ns" not in bn["ba"]
    # None by default: the engine config is what it was before ticks existed.
    bn = load(scenario(), catalog=engines.catalog("sim")).config(1)["links"][0]
    assert "tick_ns" not in bn["ab"] and "tick_ns" not in bn["ba"]


def test_path_tick_errors_name_field_value_and_fix():
    msg = error(scenario({"tick": "2s"}))
    assert "s.toml" in msg and "path.tick" in msg and "2s" in msg and "1 s" in msg
    assert "path.tick" in error(scenario({"tick": "often"}))
    assert "path.reverse.tick" in error(scenario({"reverse": {"tick": "3s"}}))


def test_engine_rejects_a_tick_above_one_second():
    sc = load(scenario({"tick": "10ms"}), catalog=engines.catalog("sim"))
    cfg = sc.config(1)
    cfg["links"][0]["ba"]["tick_ns"] = 2_000_000_000
    with pytest.raises(Exception, match=r"links\[0\]\.ba\.tick_ns"):
        engines.get_engine("sim")(cfg)


def handshake_rtt(tick: str) -> float:
    """The sized flow's first SRTT (its SYN's RTT), ms."""
    raw = run(scenario({"tick": tick}))
    s = raw["series"]
    return s["srtt_ns"][s["flow"].index(0)] / MS


def test_tick_delays_a_lone_packet_to_the_next_tick_each_way():
    # Path: 0.1 ms access links, 9.8 ms bottleneck delay (RTT 20 ms). A lone packet reaching
    # the router at 0.1 ms past a tick leaves the queue at the next tick and the delay line one
    # 10 ms delay later (9.8 ms rounded up to the tick): each crossing takes its own tick, so
    # the SYN's RTT is 20 ms plus one tick per direction (module docs: d = max(⌈f⌉, ⌊now⌋)).
    assert handshake_rtt("0s") == pytest.approx(20, abs=0.5)
    assert handshake_rtt("1ms") == pytest.approx(22, abs=0.5)
    assert handshake_rtt("10ms") == pytest.approx(40, abs=0.5)


def test_tick_keeps_the_bottleneck_rate():
    # A backlogged bulk flow through 2 Mbit/s: packets leave in bunches of ~1.7 per 10 ms tick,
    # but the credit per tick is the rate, so the bytes delivered stay within 1 %.
    flow = [{"name": "bulk", "cca": "reno", "window": "256KiB"}]
    path = {"rate": "2Mbit", "rtt": "200ms", "queue": "50pkt", "access_rate": "100Mbit"}
    ideal = run(scenario(path, flow))["flows"][0]["bytes_delivered"]
    ticked = run(scenario({**path, "tick": "10ms"}, flow))["flows"][0]["bytes_delivered"]
    assert ticked != ideal
    assert ticked == pytest.approx(ideal, rel=0.01)
