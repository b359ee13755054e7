"""End hosts that are not ideal (issue #15 §3; crates/tcplab-sim/src/host.rs): NIC receive
interrupt coalescing (``rx_coalesce``) and late host timers (``timer_slack``), end to end through
the scenario format, the engine and its packet capture."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import tcplab
from conftest import needs_core, pcap_tcp_rows
from tcplab import ScenarioError
from tcplab.kernel.linux import KnobRefusal, kernel_plan_for_flow
from tcplab.scenario import load
from test_stacks import Packets

US = 1_000
MS = 1_000_000


def simulate(doc: dict[str, Any], pcap: list[str]) -> dict[str, Any]:
    """Run *doc* in this process; the raw result of trial 0 plus ``packets``, the captured TCP
    packets as rows ``[t_ns, sport, dport, seq, ack, flags, win, wscale, payload]`` (the rows
    :class:`test_stacks.Packets` reads)."""
    r = tcplab.run(doc, pcap=pcap)
    out = dict(r.raw[0])
    rows = [row for path in r.captures for row in pcap_tcp_rows(path)]
    out["packets"] = rows
    return out


def gbit_doc(receiver_tcp: dict[str, Any], duration: str = "2s") -> dict[str, Any]:
    """A 1 Gbit/s, 20 ms path (access links as fast), one CUBIC flow from a Linux 6 host."""
    return {
        "name": "h",
        "duration": duration,
        "interval": "100ms",
        "stack": "linux-6",
        "path": {"rate": "1Gbit", "rtt": "20ms"},
        "flow": [{"name": "f", "cca": "cubic", "tcp": {"isn": 0}, "receiver_tcp": receiver_tcp}],
    }


def ack_gaps(res: dict) -> list[int]:
    """Gaps (ns) between successive ACKs reaching the sender, after the first 0.5 s (slow start
    and its queue are over by then), from the capture at the sender's access link."""
    pk = Packets(res["packets"])
    t = [p[0] for p in pk.data_acks() if p[0] - pk.syn_t > 500 * MS]
    return [b - a for a, b in itertools.pairwise(t)]


@needs_core
def test_coalescing_receiver_acks_leave_in_bursts():
    """With 125 µs coalescing (8000 interrupts/s) the receiver answers each batch of ≈ 10
    segments with its ACKs back to back: gaps between ACKs are either a few serialisation
    times of an ACK (< 5 µs) or about the interval; without it they are spread in between
    (one ACK per two 12 µs segments)."""
    off = simulate(gbit_doc({}), ["host:f.snd"])
    on = simulate(gbit_doc({"rx_coalesce": "125us"}), ["host:f.snd"])
    g_off, g_on = ack_gaps(off), ack_gaps(on)
    assert len(g_off) > 10_000 and len(g_on) > 10_000

    def share(g: list[int], lo: int, hi: int) -> float:
        return sum(lo <= x < hi for x in g) / len(g)

    # Without coalescing: most gaps are between 5 and 100 µs (≈ 24 µs: an ACK per 2 segments).
    assert share(g_off, 5 * US, 100 * US) > 0.9
    assert share(g_off, 0, 5 * US) < 0.1
    # With it: back-to-back ACKs inside a burst, and bursts one interrupt interval apart
    # (less the few µs the previous burst took to serialise).
    assert share(g_on, 0, 5 * US) > 0.7
    assert share(g_on, 5 * US, 100 * US) < 0.05
    big = [x for x in g_on if x >= 5 * US]
    assert big and min(big) >= 100 * US, min(big)
    # The engine's count of interrupts agrees: at most 8000/s, ≈ 10 segments a batch.
    (host,) = on["hosts"]
    assert host["name"] == "f.rcv" and host["rx_coalesce_ns"] == 125 * US
    assert host["interrupts"] <= 2 * 8000 + 1
    assert host["packets"] / host["interrupts"] > 5
    assert host["drops"] == 0
    # Goodput on a clean path is about the same (the batches delay segments by ≤ 125 µs).
    a, b = off["flows"][0]["bytes_delivered"], on["flows"][0]["bytes_delivered"]
    assert abs(a - b) < 0.02 * a, (a, b)
    assert "hosts" not in off


def one_segment_doc(slack: str | None) -> dict[str, Any]:
    """One segment per round trip (the receive window holds one), so every ACK waits for the
    receiver's delayed-ACK timer (generic stack: 200 ms, no quick-ACK)."""
    rtcp: dict[str, Any] = {"rcvbuf": 1448}
    if slack is not None:
        rtcp["timer_slack"] = slack
    return {
        "name": "d",
        "duration": "30s",
        "interval": "1s",
        "stack": "generic",
        "path": {"rate": "100Mbit", "rtt": "20ms"},
        "flow": [{"name": "f", "cca": "reno", "tcp": {"isn": 0}, "receiver_tcp": rtcp}],
    }


def delack_waits(res: dict) -> list[int]:
    """Per data segment: its ACK's arrival at the sender minus the segment's departure, less
    the round trip measured by the handshake (SYN → SYN-ACK)."""
    pk = Packets(res["packets"])
    rtt = pk.acks()[0][0] - pk.syn_t
    data = pk.data()
    acks = pk.data_acks()
    out = []
    for d in data:
        end = d[3] + d[8]
        a = next((a for a in acks if a[4] == end % 2**32 and a[0] > d[0]), None)
        if a is not None:
            out.append(a[0] - d[0] - rtt)
    return out


@needs_core
def test_timer_slack_spreads_delayed_ack_firings():
    exact = delack_waits(simulate(one_segment_doc(None), ["host:f.snd"]))
    late = delack_waits(simulate(one_segment_doc("20ms"), ["host:f.snd"]))
    assert len(exact) > 40 and len(late) > 40
    # Without slack every ACK waits the timeout (200 ms, plus < 0.2 ms of serialisation).
    assert all(200 * MS <= w < 200 * MS + 200 * US for w in exact), (min(exact), max(exact))
    # With it they wait [timeout, timeout + slack], spread over the range.
    assert all(200 * MS <= w < 220 * MS + 200 * US for w in late), (min(late), max(late))
    assert max(late) - min(late) > 10 * MS
    mean = sum(late) / len(late) - 200 * MS
    assert 5 * MS < mean < 15 * MS, mean  # uniform: 10 ms ± 5.8/√n·3
    # Deterministic per seed.
    again = delack_waits(simulate(one_segment_doc("20ms"), ["host:f.snd"]))
    assert again == late


# ------------------------------------------------------------------------------ validation


def scenario_error(doc: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load(doc)
    return info.value


@needs_core
@pytest.mark.parametrize("value", ["5us", "20ms"])
def test_rx_coalesce_outside_the_driver_range_is_refused(value):
    e = scenario_error(gbit_doc({"rx_coalesce": value}))
    assert e.field == "flow.0.receiver_tcp.rx_coalesce"
    assert "InterruptThrottleRate" in e.problem and "10us to 10ms" in (e.allowed or "")
    assert "125us" in str(e)


@needs_core
def test_timer_slack_too_large_is_refused():
    doc = gbit_doc({})
    doc["tcp"] = {"timer_slack": "2s"}
    e = scenario_error(doc)
    assert e.field == "tcp.timer_slack"
    assert "up to 100ms" in (e.allowed or "")


@needs_core
def test_two_flows_giving_one_host_different_coalescing_are_refused():
    doc = {
        "name": "two",
        "path": {"rate": "1Gbit", "rtt": "20ms"},
        "host": [{"name": "srv", "side": "right"}],
        "flow": [
            {"name": "a", "dst": "srv", "receiver_tcp": {"rx_coalesce": "125us"}},
            {"name": "b", "dst": "srv", "receiver_tcp": {"rx_coalesce": "50us"}},
        ],
    }
    e = scenario_error(doc)
    assert e.field == "flow.1.receiver_tcp.rx_coalesce"
    assert "srv" in e.problem and "flow.0.receiver_tcp.rx_coalesce" in e.problem
    # The same value on both is one NIC setting.
    doc["flow"][1]["receiver_tcp"]["rx_coalesce"] = "125us"
    load(doc)


@needs_core
@pytest.mark.parametrize("knob,value", [("rx_coalesce", "125us"), ("timer_slack", "50us")])
def test_kernel_engine_refuses_host_knobs(knob, value):
    doc = gbit_doc({})
    doc["engine"] = "kernel"
    doc["flow"][0].pop("receiver_tcp")
    doc["flow"][0]["tcp"][knob] = value
    e = scenario_error(doc)
    assert e.field == f"flow.0.tcp.{knob}"
    assert "engine = 'kernel'" in e.problem and "kernel/hosts.py" in e.problem
    assert e.allowed == f"engine = 'sim', or {knob} = 0"
    # The engine itself refuses a config that reaches it, and accepts the ideal host.
    with pytest.raises(KnobRefusal, match=knob):
        kernel_plan_for_flow({"name": "f", "tcp": {knob: 125 * US}}, 1500)
    kernel_plan_for_flow({"name": "f", "tcp": {knob: 0}}, 1500)


@needs_core
def test_knobs_are_off_in_every_personality():
    from tcplab import stacks

    for name in stacks.names():
        v = stacks.get(name).knob_values()
        assert not v.get("rx_coalesce") and not v.get("timer_slack"), name
