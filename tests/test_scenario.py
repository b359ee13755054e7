"""Scenario validation, error messages, --set overrides and topology expansion."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from conftest import FAKE_CATALOG, MS, ROOT, needs_core
from tcplab import ScenarioError
from tcplab.scenario import apply_overrides, load, parse_override_value


def base(**top):
    doc = {
        "name": "t",
        "duration": "20s",
        "path": {"rate": "100Mbit", "rtt": "50ms"},
        "flow": [{"name": "a"}],
    }
    doc.update(top)
    return doc


def L(doc, **kw):
    return load(doc, catalog=FAKE_CATALOG, **kw)


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def link(sc, name):
    return next(x for x in sc.config(1)["links"] if x["name"] == name)


def err(doc_or_path, **kw) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        L(doc_or_path, **kw)
    return info.value


# ------------------------------------------------------------------ defaults and expansion


def test_defaults_and_normalized_config_shape():
    sc = L({"path": {"rate": "100Mbit"}, "flow": [{}]})
    cfg = sc.config(99)
    assert cfg["seed"] == 99
    assert cfg["duration_ns"] == 10_000_000_000
    assert cfg["interval_ns"] == 1_000_000_000
    assert cfg["record_changes"] is False
    assert sc.name == "scenario" and sc.seed == 1 and sc.trials == 1 and sc.engine == "sim"
    assert [n["name"] for n in cfg["nodes"]] == ["r1", "r2", "flow0.snd", "flow0.rcv"]
    assert cfg["nodes"][0] == {"name": "r1", "kind": "router"}
    assert cfg["nodes"][2] == {
        "name": "flow0.snd",
        "kind": "host",
        "nic_rate_bps": None,
        "nic_ring_pkts": None,
    }
    bn = link(sc, "bottleneck")
    assert (bn["a"], bn["b"], bn["monitor"], bn["mtu"]) == ("r1", "r2", True, 1500)
    # default RTT 100 ms, access delay 0.1 ms: bottleneck one-way 50 - 0.2 = 49.8 ms
    assert bn["ab"]["delay_ns"] == bn["ba"]["delay_ns"] == 49_800_000
    # BDP 100 Mbit/s x 100 ms = 1.25 MB = 833.3 -> 834 packets
    assert bn["ab"]["queue"] == {"kind": "droptail", "limit_pkts": 834, "limit_bytes": None}
    assert bn["ab"]["loss"] == {"model": "none"} == bn["ba"]["loss"]
    acc = link(sc, "flow0.snd.access")
    assert (acc["a"], acc["b"], acc["monitor"]) == ("flow0.snd", "r1", False)
    assert acc["ab"]["rate_bps"] == 1_000_000_000  # 10 x rate
    assert acc["ab"]["delay_ns"] == 100_000
    assert acc["ab"]["queue"]["limit_pkts"] == 1000
    rcv = link(sc, "flow0.rcv.access")
    assert rcv["b"] == "r2"
    (flow,) = cfg["flows"]
    assert flow == {
        "name": "flow0",
        "group": "flow0",
        "kind": "tcp",
        "src": "flow0.snd",
        "dst": "flow0.rcv",
        "start_ns": 0,
        "stop_ns": 10_000_000_000,
        "bytes": None,
        "cca": {"name": "cubic", "params": {}},
        "tcp": {},
        "receiver_tcp": {},
    }


def base_rtt(sc, flow_name):
    """2 x sum of one-way delays on the flow's path, computed from the config."""
    cfg = sc.config(1)
    f = next(x for x in cfg["flows"] if x["name"] == flow_name)
    links = {x["name"]: x for x in cfg["links"]}
    return 2 * (
        links[f"{f['src']}.access"]["ab"]["delay_ns"]
        + links["bottleneck"]["ab"]["delay_ns"]
        + links[f"{f['dst']}.access"]["ab"]["delay_ns"]
    )


def test_rtt_arithmetic_per_flow():
    doc = base(
        flow=[
            {"name": "a"},
            {"name": "b", "rtt": "180ms"},
            {"name": "c", "rtt": "50.000001ms", "direction": "reverse"},
        ]
    )
    sc = L(doc)
    assert link(sc, "bottleneck")["ab"]["delay_ns"] == 24_800_000
    assert base_rtt(sc, "a") == 50 * MS
    assert base_rtt(sc, "b") == 180 * MS
    # odd: 25.0000005 ms one-way is not representable; rounded down to the ns
    assert base_rtt(sc, "c") == 50 * MS
    assert link(sc, "b.snd.access")["ab"]["delay_ns"] == link(sc, "b.rcv.access")["ab"]["delay_ns"]
    assert link(sc, "b.snd.access")["ab"]["delay_ns"] == (90 * MS - 24_800_000) // 2


def test_path_delay_instead_of_rtt():
    sc = L(base(path={"rate": "10Mbit", "delay": "10ms"}))
    assert link(sc, "bottleneck")["ab"]["delay_ns"] == 10 * MS
    assert sc.path.rtt_ns == 2 * (10 * MS + 2 * 100_000)
    assert base_rtt(sc, "a") == sc.path.rtt_ns
    both = L(base(path={"rate": "10Mbit", "delay": "10ms", "rtt": "100ms"}))
    assert link(both, "bottleneck")["ab"]["delay_ns"] == 10 * MS
    assert base_rtt(both, "a") == 100 * MS


def test_rtt_too_small_is_an_error_naming_the_minimum():
    e = err(base(flow=[{"name": "a", "rtt": "20ms"}]))
    assert e.field == "flow.0.rtt"
    assert "too small" in str(e) and "24.8ms" in str(e) and "at least 49.6ms" in str(e)
    e = err(base(path={"rate": "1Mbit", "rtt": "0.3ms"}))
    assert e.field == "path.rtt" and "at least 400us" in str(e)
    e = err(base(path={"rate": "1Mbit", "delay": "10ms", "rtt": "15ms"}))
    assert e.field == "path.rtt" and "20ms" in str(e)


def test_bdp_queue_and_reverse_overrides():
    doc = base(
        path={
            "rate": "100Mbit",
            "rtt": "50ms",
            "queue": "0.5bdp",
            "loss": "1%",
            "reverse": {"rate": "10Mbit", "loss": {"model": "bernoulli", "p": 0.02}},
        }
    )
    bn = link(L(doc), "bottleneck")
    assert bn["ab"]["queue"]["limit_pkts"] == 209  # 416.67 / 2 = 208.3 -> 209
    assert bn["ab"]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert bn["ba"]["rate_bps"] == 10_000_000
    # the reverse queue inherits "0.5bdp", with the reverse rate: 41.67 / 2 = 20.8 -> 21
    assert bn["ba"]["queue"]["limit_pkts"] == 21
    assert bn["ba"]["loss"] == {"model": "bernoulli", "p": 0.02}
    doc["path"]["reverse"] = {"queue": "8pkt"}
    bn = link(L(doc), "bottleneck")
    assert bn["ba"]["rate_bps"] == 100_000_000
    assert bn["ba"]["queue"]["limit_pkts"] == 8
    assert bn["ba"]["loss"] == {"model": "none"}  # path.loss is forward only
    doc["path"]["queue"] = "256KB"
    doc["path"]["host_queue"] = "4MB"
    sc = L(doc)
    assert link(sc, "bottleneck")["ab"]["queue"] == {
        "kind": "droptail",
        "limit_pkts": None,
        "limit_bytes": 256_000,
    }
    assert link(sc, "a.snd.access")["ba"]["queue"]["limit_bytes"] == 4_000_000


def test_gilbert_elliott_loss():
    doc = base()
    doc["path"]["loss"] = {"model": "gilbert-elliott", "p_gb": "0.1%", "p_bg": 0.3}
    assert link(L(doc), "bottleneck")["ab"]["loss"] == {
        "model": "gilbert_elliott",
        "p_gb": 0.001,
        "p_bg": 0.3,
        "loss_good": 0.0,
        "loss_bad": 1.0,
    }
    doc["path"]["loss"] = 0
    assert link(L(doc), "bottleneck")["ab"]["loss"] == {"model": "none"}


def test_streams_expand_into_a_group_sharing_hosts():
    doc = base(flow=[{"name": "bulk", "streams": 3, "window": "8MiB", "start": "1s"}, {}])
    sc = L(doc)
    cfg = sc.config(1)
    names = [f["name"] for f in cfg["flows"]]
    assert names == ["bulk.0", "bulk.1", "bulk.2", "flow1"]
    assert {f["group"] for f in cfg["flows"][:3]} == {"bulk"}
    assert {(f["src"], f["dst"]) for f in cfg["flows"][:3]} == {("bulk.snd", "bulk.rcv")}
    assert all(f["start_ns"] == 1_000_000_000 for f in cfg["flows"][:3])
    assert cfg["flows"][0]["tcp"] == {"sndbuf": 8 * 2**20, "rcvbuf": 8 * 2**20}
    assert [n["name"] for n in cfg["nodes"]] == [
        "r1",
        "r2",
        "bulk.snd",
        "bulk.rcv",
        "flow1.snd",
        "flow1.rcv",
    ]
    assert sc.groups == ["bulk", "flow1"]


def test_reverse_flows_send_right_to_left():
    sc = L(base(flow=[{"name": "back", "direction": "reverse"}]))
    hosts = {h.name: h for h in sc.hosts}
    assert hosts["back.snd"].side == "right" and hosts["back.rcv"].side == "left"
    assert link(sc, "back.snd.access")["b"] == "r2"
    assert link(sc, "back.rcv.access")["b"] == "r1"


def test_named_hosts_shared_and_rtt_absorbed_by_auto_side():
    doc = base(
        path={"rate": "10Gbit", "delay": "5ms", "rtt": "180ms", "mtu": 9000},
        host=[
            {
                "name": "server",
                "side": "left",
                "nic_rate": "5.4Gbit",
                "ring": "512pkt",
                "access_delay": "1ms",
            }
        ],
        flow=[
            {"name": "f1", "src": "server"},
            {"name": "f2", "src": "server", "rtt": "18ms"},
        ],
    )
    sc = L(doc)
    cfg = sc.config(1)
    server = next(n for n in cfg["nodes"] if n["name"] == "server")
    assert server == {
        "name": "server",
        "kind": "host",
        "nic_rate_bps": 5_400_000_000,
        "nic_ring_pkts": 512,
    }
    assert [n["name"] for n in cfg["nodes"]] == ["r1", "r2", "server", "f1.rcv", "f2.rcv"]
    assert base_rtt(sc, "f1") == 180 * MS
    assert base_rtt(sc, "f2") == 18 * MS
    assert link(sc, "server.access")["ab"]["delay_ns"] == 1 * MS
    assert sc.flows[0].direction == "forward"
    # a flow between two named hosts has the RTT they give; a different rtt is an error
    doc["host"].append({"name": "client", "side": "right"})
    doc["flow"] = [{"name": "f", "src": "server", "dst": "client"}]
    sc = L(doc)
    assert base_rtt(sc, "f") == 2 * (1 * MS + sc.path.delay_ns + 100_000)
    doc["flow"][0]["rtt"] = "180ms"
    e = err(doc)
    assert e.field == "flow.0.rtt" and "fixed access delays" in str(e)


def test_direction_from_hosts_and_conflicts():
    doc = base(
        host=[{"name": "l", "side": "left"}, {"name": "r", "side": "right"}],
        flow=[{"name": "f", "src": "r"}],
    )
    assert L(doc).flows[0].direction == "reverse"
    doc["flow"] = [{"name": "f", "src": "r", "direction": "forward"}]
    e = err(doc)
    assert e.field == "flow.0.src" and "right side" in str(e) and "left" in str(e)
    doc["flow"] = [{"name": "f", "src": "l", "dst": "l"}]
    e = err(doc)
    assert e.field == "flow.0.dst"


def test_knobs_and_cca_params_are_converted_and_merged():
    doc = base(
        tcp={"sack": False, "min_rto": "200ms", "initial_window": "rfc3390", "mss": "1448B"},
        flow=[
            {
                "name": "a",
                "cca": {"name": "cubic", "beta": 0.8, "hystart": False},
                "tcp": {"min_rto": "1s", "app_read_rate": "200Mbit", "loss_factor": 1},
            },
            {"name": "b", "cca": "htcp", "tcp": {"initial_window": 4}},
            {"name": "c", "cca": {"delta_l": "2s", "name": "htcp"}},
        ],
    )
    cfg = L(doc).config(1)
    a, b, c = cfg["flows"]
    assert a["tcp"] == {
        "mss": 1448,
        "initial_window": "rfc3390",
        "min_rto": 1_000_000_000,
        "sack": False,
        "app_read_rate": 200_000_000,
        "loss_factor": 1.0,
    }
    assert list(a["tcp"]) == ["mss", "initial_window", "min_rto", "sack", "app_read_rate",
                              "loss_factor"]  # fmt: skip
    assert a["cca"] == {"name": "cubic", "params": {"beta": 0.8, "hystart": False}}
    assert b["tcp"]["initial_window"] == 4 and b["cca"] == {"name": "htcp", "params": {}}
    assert c["cca"] == {"name": "htcp", "params": {"delta_l": 2_000_000_000}}


def test_udp_flow():
    doc = base(flow=[{"name": "u", "kind": "udp", "rate": "20Mbit", "start": "5s", "stop": "10s"}])
    (u,) = L(doc).config(1)["flows"]
    assert u == {
        "name": "u",
        "group": "u",
        "kind": "udp",
        "src": "u.snd",
        "dst": "u.rcv",
        "start_ns": 5_000_000_000,
        "stop_ns": 10_000_000_000,
        "rate_bps": 20_000_000,
        "payload_bytes": 1470,
    }


def test_sized_transfer():
    (f,) = L(base(flow=[{"bytes": "10MB"}])).config(1)["flows"]
    assert f["bytes"] == 10_000_000 and f["stop_ns"] == 20_000_000_000


def test_app_iperf3_opens_with_the_cookie():
    # app = "iperf3": a 37-byte opening write, the bulk app_delay after its ACK.
    (f,) = L(base(flow=[{"app": "iperf3", "app_delay": "2ms"}])).config(1)["flows"]
    assert (f["prelude_bytes"], f["prelude_gap_ns"]) == (37, 2 * MS)
    (f,) = L(base(flow=[{"app": "iperf3"}])).config(1)["flows"]
    assert (f["prelude_bytes"], f["prelude_gap_ns"]) == (37, 0)
    # The default application writes from the start; its config has no prelude keys at all,
    # so configurations (and their results) made before the key existed are unchanged.
    (f,) = L(base(flow=[{}])).config(1)["flows"]
    assert "prelude_bytes" not in f and "prelude_gap_ns" not in f
    with pytest.raises(ScenarioError) as e:
        L(base(flow=[{"app_delay": "2ms"}]))
    assert e.value.field == "flow.0.app_delay" and 'app = "iperf3"' in str(e.value)
    with pytest.raises(ScenarioError) as e:
        L(base(flow=[{"app": "iperf2"}]))
    assert e.value.field == "flow.0.app" and "did you mean 'iperf3'" in str(e.value)


@needs_core
def test_app_iperf3_runs_its_bulk_a_round_trip_after_the_cookie():
    import tcplab

    doc = {
        "name": "t",
        "duration": "3s",
        "path": {"rate": "100Mbit", "rtt": "20ms", "queue": "bdp"},
        "flow": [
            {"name": "a", "bytes": "1MB", "sender_stack": "linux-6", "receiver_stack": "linux-6"}
        ],
    }
    plain = tcplab.run(doc).summary["flows"]["a"]
    doc["flow"][0].update(app="iperf3", app_delay="2ms")
    iperf3 = tcplab.run(doc).summary["flows"]["a"]
    # TCP's count of delivered bytes includes the cookie (as tcpi_bytes_received does).
    assert plain["bytes_delivered"]["mean"] == 1_000_000
    assert iperf3["bytes_delivered"]["mean"] == 1_000_037
    # The Linux receiver acknowledges the cookie at once (quick-ACK mode): the bulk starts a
    # round trip of the empty path plus the 2 ms later. The transfer itself is not the same
    # (CUBIC's delay_min is the cookie's RTT), so allow it a millisecond either way.
    shift = iperf3["completion_s"]["mean"] - plain["completion_s"]["mean"]
    assert 0.021 <= shift <= 0.0235, shift


# ------------------------------------------------------------------ error messages


@pytest.mark.parametrize(
    ("mutate", "field", "fragments"),
    [
        (lambda d: d["path"].update(rte="1"), "path.rte", ["unknown key", "did you mean 'rate'"]),
        (lambda d: d.update(durration="1s"), "durration", ["did you mean 'duration'"]),
        (lambda d: d["path"].pop("rate"), "path.rate", ["missing (required)", "100Mbit"]),
        (
            lambda d: d["path"].update(rate="100Mbt"),
            "path.rate",
            ["'100Mbt'", "did you mean 'Mbit'"],
        ),
        (lambda d: d["path"].update(rate="0bit"), "path.rate", ["more than zero"]),
        (lambda d: d["path"].update(queue="lots"), "path.queue", ["'lots'", "0.5bdp"]),
        (lambda d: d["path"].update(host_queue="bdp"), "path.host_queue", ["not allowed here"]),
        (lambda d: d["path"].update(mtu=100), "path.mtu", ["out of range", "576 to 65535"]),
        (lambda d: d["path"].update(loss="2"), "path.loss", ["more than 1", "gilbert-elliott"]),
        (
            lambda d: d["path"].update(loss={"model": "gilbert"}),
            "path.loss.model",
            ["unknown loss model", "did you mean 'gilbert-elliott'"],
        ),
        (
            lambda d: d["path"].update(loss={"model": "bernoulli", "P": 0.1}),
            "path.loss.P",
            ["unknown key", "did you mean 'p'"],
        ),
        (
            lambda d: d["path"].update(reverse={"delay": "1ms"}),
            "path.reverse.delay",
            ["unknown key", "rate, queue, loss"],
        ),
        (lambda d: d.update(engine="kernal"), "engine", ["did you mean 'kernel'", "'sim'"]),
        (lambda d: d.update(trials=0), "trials", ["out of range"]),
        (lambda d: d.update(seed=-1), "seed", ["out of range"]),
        (lambda d: d.update(seed="x"), "seed", ["not an integer"]),
        (lambda d: d.update(interval="30s"), "interval", ["longer than the duration"]),
        (lambda d: d.update(interval="1ns"), "interval", ["samples per flow"]),
        (lambda d: d.update(record_changes="yes"), "record_changes", ["not a boolean"]),
        (lambda d: d.update(name="a b"), "name", ["not a valid scenario name"]),
        (lambda d: d.pop("flow"), "flow", ["at least one [[flow]]"]),
        (lambda d: d.update(flow={"name": "x"}), "flow", ["[[flow]]"]),
        (lambda d: d["flow"][0].update(cca="cubci"), "flow.0.cca", ["did you mean 'cubic'"]),
        (
            lambda d: d["flow"][0].update(cca={"name": "cubic", "betta": 0.5}),
            "flow.0.cca.betta",
            ["unknown key", "did you mean 'beta'"],
        ),
        (
            lambda d: d["flow"][0].update(cca={"name": "reno", "beta": 0.5}),
            "flow.0.cca.beta",
            ["reno has no parameters"],
        ),
        (
            lambda d: d["flow"][0].update(cca={"name": "cubic", "beta": "high"}),
            "flow.0.cca.beta",
            ["not a number"],
        ),
        (
            lambda d: d["flow"][0].update(tcp={"sak": True}),
            "flow.0.tcp.sak",
            ["unknown key", "did you mean 'sack'"],
        ),
        (
            lambda d: d["flow"][0].update(tcp={"recovery": "newrenno"}),
            "flow.0.tcp.recovery",
            ["did you mean 'newreno'", "'sack'"],
        ),
        (
            lambda d: d["flow"][0].update(tcp={"initial_window": "rfc3930"}),
            "flow.0.tcp.initial_window",
            ["did you mean 'rfc3390'"],
        ),
        (
            lambda d: d["flow"][0].update(tcp={"min_rto": 200}),
            "flow.0.tcp.min_rto",
            ["needs a unit", "180ms"],
        ),
        (lambda d: d.update(tcp={"sack": "yes"}), "tcp.sack", ["not a boolean", "true or false"]),
        (
            lambda d: d["flow"][0].update(window="8MB", tcp={"sndbuf": "1MB"}),
            "flow.0.tcp.sndbuf",
            ["conflicts with window"],
        ),
        (lambda d: d["flow"][0].update(rate="1Mbit"), "flow.0.rate", ["only for udp flows"]),
        (
            lambda d: d["flow"].append({"kind": "udp", "rate": "1Mbit", "cca": "reno"}),
            "flow.1.cca",
            ["only for tcp flows"],
        ),
        (lambda d: d["flow"].append({"kind": "udp"}), "flow.1.rate", ["missing (required)"]),
        (
            lambda d: d["flow"].append({"kind": "udp", "rate": "1Mbit", "payload": "1500B"}),
            "flow.1.payload",
            ["does not fit the MTU", "1472B"],
        ),
        (lambda d: d["flow"].append({"kind": "sctp"}), "flow.1.kind", ["unknown flow kind"]),
        (lambda d: d["flow"].append({"name": "a"}), "flow.1.name", ["used by another"]),
        (lambda d: d["flow"][0].update(name="a.b"), "flow.0.name", ["not a valid name", "no dots"]),
        (lambda d: d["flow"][0].update(start="20s"), "flow.0.start", ["not before the end"]),
        (lambda d: d["flow"][0].update(stop="30s"), "flow.0.stop", ["after the end of the run"]),
        (
            lambda d: d["flow"][0].update(start="5s", stop="5s"),
            "flow.0.stop",
            ["not after start"],
        ),
        (
            lambda d: d["flow"][0].update(bytes="1MB", stop="5s"),
            "flow.0.bytes",
            ["either sized (bytes) or timed (stop)"],
        ),
        (lambda d: d["flow"][0].update(streams=0), "flow.0.streams", ["out of range"]),
        (lambda d: d["flow"][0].update(src="srv"), "flow.0.src", ["unknown host", "none are"]),
        (
            lambda d: (
                d.update(host=[{"name": "server", "side": "left"}])
                or d["flow"][0].update(src="sever")
            ),
            "flow.0.src",
            ["did you mean 'server'"],
        ),
        (lambda d: d.update(host=[{"name": "r1", "side": "left"}]), "host.0.name", ["reserved"]),
        (lambda d: d.update(host=[{"name": "h", "side": "up"}]), "host.0.side", ["'left'"]),
        (
            lambda d: d.update(host=[{"name": "h", "side": "left", "nic": "1Gbit"}]),
            "host.0.nic",
            ["did you mean 'nic_rate'"],
        ),
    ],
)
def test_errors_name_file_field_value_and_allowed(tmp_path, mutate, field, fragments):
    doc = base()
    mutate(doc)
    import tomllib as _t  # noqa: F401  (documents that the doc is TOML-shaped)

    from tomli_w import dumps

    path = write(tmp_path, dumps(doc))
    e = err(path)
    msg = str(e)
    assert e.file == str(path)
    assert msg.startswith(f"{path}: {field}")
    assert e.field == field
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_error_message_shows_value_and_allowed():
    doc = base()
    doc["flow"][0]["cca"] = "cubci"
    msg = str(err(doc))
    assert msg == (
        "<scenario>: flow.0.cca = 'cubci': unknown congestion control (did you mean 'cubic'?). "
        "Allowed: one of 'cubic', 'reno', 'newreno', 'htcp'"
    )


def test_file_errors(tmp_path):
    e = err(tmp_path / "missing.toml")
    assert "no such file" in str(e) and "missing.toml" in str(e)
    bad = write(tmp_path, "name = \n")
    e = err(bad)
    assert str(e).startswith(f"{bad}: not valid TOML")


def test_default_name_is_the_file_stem(tmp_path):
    p = write(tmp_path, '[path]\nrate = "1Mbit"\n[[flow]]\n', name="my-exp.toml")
    assert L(p).name == "my-exp"


# ------------------------------------------------------------------ overrides


def test_parse_override_value():
    assert parse_override_value("true") is True
    assert parse_override_value("8") == 8
    assert parse_override_value("0.7") == 0.7
    assert parse_override_value('"x y"') == "x y"
    assert parse_override_value("8MB") == "8MB"
    assert parse_override_value("reno") == "reno"
    assert parse_override_value("1%") == "1%"
    assert parse_override_value("{name='cubic', beta=0.8}") == {"name": "cubic", "beta": 0.8}


def test_set_by_dotted_path_index_and_name():
    doc = base(flow=[{"name": "cubic"}, {"name": "other"}, {}])
    sc = L(
        doc,
        overrides=[
            "flow.0.cca=reno",
            "flow.other.window=8MB",
            "flow.flow2.streams=2",
            "path.rate=1Gbit",
            "path.reverse.rate=10Mbit",
            "tcp.sack=false",
            "flow.other.cca.beta=0.9",
            "duration=30s",
        ],
    )
    cfg = sc.config(1)
    flows = {f["name"]: f for f in cfg["flows"]}
    assert flows["cubic"]["cca"]["name"] == "reno"
    assert flows["other"]["tcp"]["sndbuf"] == 8_000_000
    assert flows["other"]["cca"] == {"name": "cubic", "params": {"beta": 0.9}}
    assert "flow2.0" in flows and "flow2.1" in flows
    assert link(sc, "bottleneck")["ab"]["rate_bps"] == 1_000_000_000
    assert link(sc, "bottleneck")["ba"]["rate_bps"] == 10_000_000
    assert all(f["tcp"]["sack"] is False for f in cfg["flows"])
    assert cfg["duration_ns"] == 30_000_000_000
    # the original document is untouched
    assert doc["flow"][0] == {"name": "cubic"}


def test_set_string_cca_becomes_table():
    doc = base()
    doc["flow"][0]["cca"] = "cubic"
    new, origins = apply_overrides(doc, ["flow.a.cca.hystart=false"])
    assert new["flow"][0]["cca"] == {"name": "cubic", "hystart": False}
    assert origins == {"flow.0.cca.hystart": "--set flow.a.cca.hystart=false"}


@pytest.mark.parametrize(
    ("override", "fragments"),
    [
        ("flow.0.cca", ["expected FIELD=VALUE"]),
        ("flow..cca=x", ["bad field path"]),
        ("flow.5.cca=reno", ["only 1 [[flow]] tables", "index from 0 to 0"]),
        ("flow.b.cca=reno", ["no [[flow]] named 'b'", "'a'"]),
        ("host.0.side=left", ["no [[host]] tables"]),
        ("flow.0=3", ["cannot replace a whole [[flow]]"]),
        ("path.rate.x=1", ["is a string"]),
    ],
)
def test_set_errors(override, fragments):
    msg = str(err(base(), overrides=[override]))
    assert f"--set {override}" in msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_bad_overridden_value_says_where_it_came_from():
    e = err(base(), overrides=["flow.a.cca=cubci"])
    assert e.field == "flow.0.cca"
    assert "(from --set flow.a.cca=cubci)" in str(e)
    assert "did you mean 'cubic'" in str(e)
    e = err(base(), overrides=["pth.rate=1Gbit"])
    assert e.field == "pth" and "did you mean 'path'" in str(e) and "--set pth.rate" in str(e)
    e = err(base(), trials=0)
    assert "(from --trials 0)" in str(e)


# ------------------------------------------------------------------ resolved scenario


def test_resolved_scenario_roundtrips_to_the_same_config(tmp_path):
    doc = base(
        path={"rate": "100Mbit", "rtt": "50ms", "reverse": {"loss": "1%"}},
        tcp={"sack": True},
        host=[{"name": "srv", "side": "left", "nic_rate": "50Mbit"}],
        flow=[
            {"name": "a", "src": "srv", "streams": 2, "cca": {"name": "cubic", "beta": 0.8}},
            {"kind": "udp", "rate": "1Mbit", "start": "1s", "stop": "2s", "direction": "reverse"},
            {"bytes": "1MB", "rtt": "80ms"},
        ],
    )
    sc = L(doc, overrides=["path.rate=50Mbit"], trials=3, seed=7)
    text = sc.resolved_toml()
    again = L(write(tmp_path, text))
    assert again.config(5) == sc.config(5)
    assert (again.trials, again.seed, again.name) == (3, 7, "t")
    resolved = tomllib.loads(text)
    assert resolved["path"]["rate"] == "50Mbit"
    assert resolved["duration"] == "20s" and resolved["interval"] == "1s"
    assert resolved["flow"][1]["name"] == "flow1" and resolved["flow"][1]["payload"] == "1470B"


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_validate(path):
    sc = L(path)
    assert sc.flows
    text = path.read_text()
    # every value line carries a comment
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and not s.startswith("[") and "=" in s:
            assert "#" in s, f"{path.name}: uncommented value: {line}"
    assert copy.deepcopy(sc.resolved) == sc.resolved


def test_receiver_tcp_overrides_the_flow_knobs_for_the_receiver():
    doc = base(
        tcp={"sack": True},
        flow=[
            {
                "name": "a",
                "window": "1MB",
                "receiver_tcp": {"rcvbuf": "64KB", "delack_timeout": "300ms"},
            },
            {"name": "b"},
        ],
    )
    a, b = L(doc).config(1)["flows"]
    assert a["tcp"] == {"sndbuf": 1_000_000, "rcvbuf": 1_000_000, "sack": True}
    assert a["receiver_tcp"] == {
        "sndbuf": 1_000_000,
        "rcvbuf": 64_000,
        "delack_timeout": 300_000_000,
        "sack": True,
    }
    assert b["receiver_tcp"] == b["tcp"] == {"sack": True}
    doc["flow"][0]["receiver_tcp"] = {"rcvbuff": 1}
    e = err(doc)
    assert e.field == "flow.0.receiver_tcp.rcvbuff" and "did you mean 'rcvbuf'" in str(e)


def test_list_loss_model():
    doc = base()
    doc["path"]["loss"] = {"model": "list", "packets": [30, 10, 10]}
    assert link(L(doc), "bottleneck")["ab"]["loss"] == {"model": "list", "packets": [10, 30]}
    doc["path"]["loss"] = {"model": "list", "packets": [-1]}
    assert err(doc).field == "path.loss.packets"


def test_start_jitter_is_per_trial_per_flow_and_bounded():
    import hashlib

    doc = base(flow=[{"name": "a", "streams": 2, "start": "1s", "start_jitter": "500ms"}, {}])
    sc = L(doc)
    starts = {}
    for seed in range(50):
        cfg = sc.config(seed)
        for f in cfg["flows"][:2]:
            d = hashlib.sha256(f"tcplab-start:{seed}:{f['name']}".encode()).digest()
            expect = 1_000_000_000 + int.from_bytes(d[:8], "big") % (500_000_000 + 1)
            assert f["start_ns"] == expect
            assert 1_000_000_000 <= f["start_ns"] <= 1_500_000_000
            starts.setdefault(f["name"], set()).add(f["start_ns"])
        assert cfg["flows"][2]["start_ns"] == 0  # no jitter: unchanged
    assert len(starts["a.0"]) == 50 and starts["a.0"] != starts["a.1"]
    assert sc.config(7) == sc.config(7)
    doc["flow"][0]["stop"] = "1.4s"
    e = err(doc)
    assert e.field == "flow.0.stop" and "start + start_jitter" in str(e)
    doc["flow"][0].pop("stop")
    doc["flow"][0]["start_jitter"] = "19s"
    assert err(doc).field == "flow.0.start_jitter"


# ------------------------------------------------------- values the engine cannot represent

_RANGE_U64 = "from 0 to 18446744073709551615"
_RANGE_U32 = "from 0 to 4294967295"


def _scenario_text(top="", path="", flow="", tcp="", rate="100Mbit", rtt="50ms"):
    return (
        f'name = "t"\nduration = "20s"\n{top}\n'
        f"[tcp]\n{tcp}\n"
        f'[[flow]]\nname = "a"\n{flow}\n'
        f'[path]\nrate = "{rate}"\nrtt = "{rtt}"\n{path}\n'
    )


@pytest.mark.parametrize(
    ("text", "field", "value", "fragments"),
    [
        (_scenario_text(rate="1e30bit"), "path.rate", "'1e30bit'",
         [f"{_RANGE_U64} bit/s (2^64 − 1)"]),
        (_scenario_text(top='interval = "1e30s"'), "interval", "'1e30s'",
         [f"{_RANGE_U64} nanoseconds (2^64 − 1)"]),
        (_scenario_text(rtt="1e20s"), "path.rtt", "'1e20s'",
         [f"{_RANGE_U64} nanoseconds"]),
        (_scenario_text(path='queue = "1e30pkt"'), "path.queue", "'1e30pkt'",
         [f"{_RANGE_U32} packets (2^32 − 1)"]),
        (_scenario_text(path='queue = "1e30B"'), "path.queue", "'1e30B'",
         [f"{_RANGE_U64} bytes"]),
        (_scenario_text(path='queue = "1e30bdp"'), "path.queue", "'1e30bdp'",
         ["packets on this path", "at most 4294967295 packets (2^32 − 1)"]),
        (_scenario_text(path='[path.reverse]\nqueue = "1e20bdp"'), "path.reverse.queue",
         "'1e20bdp'", ["at most 4294967295 packets"]),
        (_scenario_text(flow='window = "1e30B"'), "flow.0.window", "'1e30B'",
         [f"{_RANGE_U64} bytes"]),
        (_scenario_text(flow='bytes = "20000000TB"'), "flow.0.bytes", "'20000000TB'",
         [f"{_RANGE_U64} bytes"]),
        (_scenario_text(tcp="dupthresh = 100000000000000000000"), "tcp.dupthresh",
         "100000000000000000000", ["an integer from -9223372036854775808"]),
        (_scenario_text(flow='cca = { name = "cubic", beta = nan }'), "flow.0.cca.beta", "nan",
         ["not a finite number", "1.8e308"]),
    ],
)  # fmt: skip
def test_unrepresentable_values_name_file_field_value_and_range(
    tmp_path, text, field, value, fragments
):
    path = write(tmp_path, text)
    e = err(path)
    msg = str(e)
    assert e.field == field, msg
    assert msg.startswith(f"{path}: {field} = {value}: "), msg
    assert "Allowed: " in msg, msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


@needs_core
@pytest.mark.parametrize(
    ("text", "field", "fragments"),
    [
        # mss and dupthresh are u32 fields in the engine (crates/tcplab-sim/src/tcp/config.rs).
        (_scenario_text(tcp='mss = "5GB"'), "tcp.mss", [f"{_RANGE_U32} bytes (2^32 − 1)"]),
        (_scenario_text(tcp="dupthresh = 5000000000"), "tcp.dupthresh",
         [f"an integer {_RANGE_U32} (2^32 − 1)"]),
        (_scenario_text(tcp="dupthresh = -1"), "tcp.dupthresh", [f"an integer {_RANGE_U32}"]),
        (_scenario_text(tcp="initial_window = 5000000000"), "tcp.initial_window",
         ["integer from 1 to 4294967295"]),
        (_scenario_text(tcp='max_rto = "1e30s"'), "tcp.max_rto", [f"{_RANGE_U64} nanoseconds"]),
        # CCA integer parameters are i64 in the engine.
        (_scenario_text(flow='cca = { name = "cubic", hystart_low_window = 10000000000000000000 }'),
         "flow.0.cca.hystart_low_window", ["from -9223372036854775808 to 9223372036854775807"]),
        (_scenario_text(flow='cca = { name = "cubic", c = 1e400 }'), "flow.0.cca.c",
         ["not a finite number"]),
    ],
)  # fmt: skip
def test_unrepresentable_knob_and_cca_values_with_the_core(tmp_path, text, field, fragments):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load(path)
    e = info.value
    msg = str(e)
    assert e.field == field, msg
    assert msg.startswith(f"{path}: {field} = "), msg
    for frag in fragments:
        assert frag in msg, (frag, msg)
