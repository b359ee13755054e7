"""OS stack personalities (python/tcplab/stacks): the data files, how scenarios resolve them, the
``list stacks`` / ``show stack`` commands, and packet-level checks through the simulator of what
distinguishes each stack (the first second of Jansen & McGregor's J1 path, the quirks of J4, the
receive limit of Iwanaga et al., the pacing and window growth of Zhou & Yan).

Simulations run in a child process with a time limit (:func:`simulate`), so an engine that never
finishes fails one test with a clear message instead of hanging the suite.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import tcplab.catalog
from conftest import ROOT, needs_core
from tcplab import stacks
from tcplab.catalog import Catalog
from tcplab.cli import main
from tcplab.scenario import load

MS = 1_000_000
S = 1_000_000_000

#: The personalities issue 3 asks for (plus "generic", the knob defaults).
REQUIRED = (
    "linux-2.4.27",
    "linux-2.6.10",
    "linux-2.6.16",
    "linux-2.6.25",
    "linux-2.6.29",
    "linux-2.6.39",
    "linux-6",
    "freebsd-5.2.1",
    "freebsd-5.3",
    "openbsd-3.5",
    "windows-xp",
    "windows-vista",
    "windows-7",
    "windows-server-2008",
    "solaris-10",
    "macos",
)
ALL = stacks.names()
#: The six stacks of Jansen & McGregor's J1 (seed-experiments.md J).
J1_STACKS = (
    "linux-2.4.27",
    "linux-2.6.10",
    "freebsd-5.2.1",
    "freebsd-5.3",
    "openbsd-3.5",
    "windows-xp",
)


@cache
def core_catalog() -> Catalog:
    return Catalog.from_core()


@cache
def resolution_catalog() -> Catalog:
    """The engine's knobs, and its algorithms plus those issue 3 specifies that this build may
    still lack (bic with `variant`, ctcp, cubic's `version`), so resolution tests do not depend on
    which algorithms are built. The packet-level tests use the real catalog."""
    ccas = [dict(c) for c in tcplab.catalog.load_core().list_ccas()]
    by_name = {c["name"]: c for c in ccas}
    cubic = by_name["cubic"]
    if not any(p["name"] == "version" for p in cubic["params"]):
        cubic["params"] = [
            *cubic["params"],
            {
                "name": "version",
                "kind": "choice",
                "default": "rfc9438",
                "choices": ["rfc9438", "2.0"],
            },
        ]
    if "bic" not in by_name:
        ccas.append(
            {
                "name": "bic",
                "params": [
                    {"name": "variant", "kind": "choice", "default": "linux",
                     "choices": ["linux", "2.6.10"]},
                ],
            }
        )  # fmt: skip
    if "ctcp" not in by_name:
        ccas.append({"name": "ctcp", "params": []})
    return Catalog.from_lists(tcplab.catalog.load_core().tcp_knobs(), ccas)


def base(**flow: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "duration": "2s",
        "path": {"rate": "2Mbit", "rtt": "200ms"},
        "flow": [{"name": "f", **flow}],
    }


# ============================================================================ the data files


def test_every_required_stack_is_shipped_and_generic_first():
    assert ALL[0] == "generic"
    assert set(REQUIRED) <= set(ALL)


@needs_core
def test_a_personality_is_parsed_once_for_the_default_catalog(monkeypatch):
    # the scenario loader passes the process's default catalog explicitly; it parsed two TOML
    # files again for every scenario (414 parses in one `tcplab identify`)
    default = tcplab.catalog.default_catalog()
    first = stacks.get("linux-6", default)
    parsed = []
    real = stacks.parse
    monkeypatch.setattr(stacks, "parse", lambda *a: parsed.append(a) or real(*a))
    assert stacks.get("linux-6", default) is first and stacks.get("linux-6") is first
    assert parsed == []
    # another catalog is validated against, not served from the cache
    other = Catalog.from_core()
    assert stacks.get("linux-6", other) is not first and len(parsed) == 1


@needs_core
@pytest.mark.parametrize("name", ALL)
def test_personality_validates_against_the_engine_knobs(name):
    cat = core_catalog()
    path = Path(stacks.__file__).parent / f"{name}.toml"
    st = stacks.parse(path.read_text(encoding="utf-8"), path.name, cat)
    assert st.name == name
    assert st.description and st.os
    for knob, s in st.knobs.items():
        param = cat.knobs[knob]
        # the normalized value is what the knob's kind makes of the written value
        assert s.value == stacks.convert_knob(param, s.raw)
    if name != "generic":
        differs = [k for k, s in st.knobs.items() if s.value != cat.knobs[k].default]
        assert differs, f"{name} sets nothing that differs from the engine defaults"


@needs_core
@pytest.mark.parametrize("name", ALL)
def test_every_value_has_a_source_and_assumptions_are_marked(name):
    st = stacks.get(name, core_catalog())
    for where, s in st.settings():
        assert s.source.strip(), f"{name}: {where} has no source"
        text = f"{s.source} {s.note}"
        if "UNVERIFIED" in text or "ssum" in s.note:  # "Assumption", "assumed"
            assert s.verified is False, f"{name}: {where} is an assumption but verified = true"
        if not s.verified:
            assert s.note or "UNVERIFIED" in s.source, (
                f"{name}: {where} does not say what it assumes"
            )
        if s.approximate:
            assert s.note, f"{name}: {where} is approximate but does not say how"


@needs_core
def test_reference_unverified_rows_and_calibrated_quirks_are_not_marked_verified():
    """Values the facts table marks UNVERIFIED (stacks-and-ccas.md), and the calibrated or assumed
    quirk parameters, are assumptions here too."""
    cases = {
        "windows-xp": ["min_rto", "rx_capacity"],
        # Vista / 7 / Server 2008's `timestamps` (answered) left this list on 2026-11-30: measured
        # in nmap-os-db's SYN-ACKs to timestamped probes (the tomls cite them).
        "windows-vista": ["min_rto", "initial_rto", "rx_capacity"],
        "windows-7": ["initial_rto", "max_rto"],
        "windows-server-2008": ["min_rto", "initial_rto", "syn_retries"],
        "openbsd-3.5": ["rcvbuf"],
        # freebsd-5.2.1's rcvbuf and clock (HZ) are marked UNVERIFIED in the facts table but
        # were read in the 5.2.1-RELEASE tree (tcp_usrreq.c tcp_recvspace, subr_param.c HZ 100):
        # verified there, see test_key_facts_of_each_personality.
        "freebsd-5.3": ["quirk_invalid_sack_fraction", "timer_tick", "clock_granularity"],
        "solaris-10": ["initial_window", "rcvbuf", "sack"],
        "linux-2.6.25": ["rcvbuf_autotune_max"],
    }
    for name, knobs in cases.items():
        st = stacks.get(name, core_catalog())
        for k in knobs:
            assert st.knobs[k].verified is False, f"{name}: {k}"


@needs_core
def test_key_facts_of_each_personality():
    """The facts issue 3 lists, per stack (normalized values)."""
    expect: dict[str, dict[str, Any]] = {
        "linux-2.4.27": {
            "initial_window": 2, "quickack_segments": 16, "rwnd_initial_segments": 4,
            "delack_timeout": 40 * MS, "min_rto": 200 * MS, "rto_min_on_variance": True,
            "initial_rto": 3 * S, "clock_granularity": 10 * MS, "cwnd_unit": "packets",
            "abc": 0, "recovery": "ratehalving",
        },
        "linux-2.6.10": {"initial_window": "rfc3390", "clock_granularity": 1 * MS,
                         "recovery": "ratehalving", "abc": 0},
        "linux-2.6.16": {"clock_granularity": 4 * MS, "abc": 1},
        "linux-2.6.25": {"clock_granularity": 4 * MS, "abc": 0},
        "linux-6": {"initial_window": 10, "initial_rto": 1 * S, "recovery": "prr", "rack": True},
        "freebsd-5.2.1": {"initial_window": 1, "delack_timeout": 100 * MS, "min_rto": 30 * MS,
                          "rto_slop": 200 * MS, "rto_min_on_variance": False,
                          "sack": False, "rcvbuf": 65536, "rcvbuf_autotune_max": None,
                          "sndbuf": 32768, "timer_tick": 10 * MS,
                          "rto_backoff_max_multiplier": 512, "rtt_forget_into_rttvar": True},
        "freebsd-5.3": {"initial_window": "rfc3390", "sack": True, "delack_timeout": 100 * MS,
                        "min_rto": 30 * MS, "rto_slop": 200 * MS, "timer_tick": 10 * MS,
                        "rto_backoff_unclamped": True, "rtt_forget_after_backoffs": 4,
                        "undo_bad_rexmt": True, "rtt_fixed_point": True,
                        "rtt_xmit_timer": "freebsd", "rto_backoff_max_multiplier": 512,
                        "rtt_forget_into_rttvar": True},
        "openbsd-3.5": {"initial_window": 1, "delack_timeout": 300 * MS, "rcvbuf": 16384,
                        "min_rto": 1 * S, "clock_granularity": 500 * MS,
                        "timer_tick": 500 * MS, "rto_slop": 0, "rto_backoff_unclamped": True,
                        "rtt_forget_after_backoffs": 4, "undo_bad_rexmt": False,
                        "initial_rto": 6 * S, "rtt_fixed_point": True,
                        "rtt_xmit_timer": "openbsd-3.5", "rto_backoff_max_multiplier": 0,
                        "rtt_forget_into_rttvar": False},
        "windows-xp": {"initial_window": 2, "delack_timeout": 200 * MS, "min_rto": 300 * MS,
                       "rcvbuf": 16384, "rcvbuf_round_to_mss": True,
                       "window_scaling_offer_unscaled": False,
                       "timestamps": True, "timestamps_offer": False,
                       "dupthresh": 2,
                       "max_data_retransmissions": 5, "max_rto": 240 * S,
                       "quirk_ignore_rwnd_in_recovery": True, "rx_capacity": 200_000_000},
        "windows-vista": {"rcvbuf_autotune_max": 16776960, "rx_capacity": 350_000_000,
                          "max_data_retransmissions": 5, "dupthresh": 3,
                          "timestamps": True, "timestamps_offer": False, "syn_window": 8192},
        "windows-7": {"cwnd_unit": "bytes", "pacing": True, "clock_granularity": 10 * MS,
                      "timestamps": True, "timestamps_offer": False, "syn_window": 8192,
                      "rcvbuf_autotune_max": 16776960, "rx_capacity": None,
                      "min_rto": 300 * MS, "delack_timeout": 200 * MS,
                      "max_data_retransmissions": 5, "dupthresh": 3},
        "windows-server-2008": {"rcvbuf_autotune_max": 16776960, "timestamps": True,
                                "timestamps_offer": False, "syn_window": 8192},
        "solaris-10": {"min_rto": 400 * MS, "delack_timeout": 100 * MS},
        "macos": {"initial_window": "rfc3390", "initial_rto": 1 * S, "max_rto": 64 * S,
                  "rto_backoff_max_multiplier": 64, "rtt_forget_after_backoffs": 4,
                  "min_rto": 30 * MS, "rto_min_on_variance": False, "rto_slop": 200 * MS,
                  "rto_slop_established_only": True, "timer_tick": 1 * MS,
                  "clock_granularity": 1 * MS, "rto_floor_ticks": 2, "rtt_fixed_point": True,
                  "rtt_xmit_timer": "xnu", "rto_backoff_unclamped": True,
                  "rtt_forget_into_rttvar": True, "rtt_recompute_after_bad_rexmt": True,
                  "peer_local": False, "min_rto_local": 100 * MS, "initial_window_local": 8},
    }  # fmt: skip
    cca = {
        "linux-2.4.27": "reno", "linux-2.6.10": "bic", "linux-2.6.25": "cubic",
        "linux-2.6.29": "cubic", "linux-2.6.39": "cubic", "linux-6": "cubic",
        "freebsd-5.2.1": "newreno", "freebsd-5.3": "newreno", "openbsd-3.5": "newreno",
        "windows-xp": "newreno", "windows-vista": "newreno", "windows-7": "newreno",
        "windows-server-2008": "ctcp", "solaris-10": "newreno", "macos": "cubic",
    }  # fmt: skip
    cat = core_catalog()
    for name, facts in expect.items():
        st = stacks.get(name, cat)
        values = {k: cat.knobs[k].default for k in cat.knobs} | st.knob_values()
        for k, v in facts.items():
            assert values[k] == v, f"{name}: {k} = {values[k]!r}, expected {v!r}"
    for name, algo in cca.items():
        assert stacks.get(name, cat).cca == algo, name
    assert stacks.get("linux-2.6.10", cat).params_for("bic") == {
        "variant": "2.6.10",
        "ai_rule": "linux-2.6",
    }
    # Linux 2.2-3.19 congestion avoidance (tcp_cong_avoid / tcp_reno_cong_avoid /
    # bictcp_cong_avoid, then tcp_cong_avoid_ai until 4.0): the ACK counts once and +1 segment
    # per w + 1 ACKs, for Reno, NewReno and BIC in every Linux 2.x personality, not in linux-6.
    linux2 = ("linux-2.4.27", "linux-2.6.10", "linux-2.6.16", "linux-2.6.25", "linux-2.6.29")
    for name in (*linux2, "linux-2.6.39"):
        st = stacks.get(name, cat)
        algos = ("reno", "newreno") if name == "linux-2.4.27" else ("reno", "newreno", "bic")
        for algo in algos:
            assert st.params_for(algo)["ai_rule"] == "linux-2.6", (name, algo)
        # Scalable too, from the pluggable modules of 2.6.13 on (tcp_scalable.c).
        has_scalable = name not in ("linux-2.4.27", "linux-2.6.10")
        assert ("ai_rule" in st.params_for("scalable")) == has_scalable, name
        # tcp_moderate_cwnd on dubious ACKs, the undoing one included (2.4-3.0).
        assert st.knob_values()["cwnd_moderation"] is True, name
    for algo in ("reno", "newreno", "bic", "scalable"):
        assert "ai_rule" not in stacks.get("linux-6", cat).params_for(algo), algo
    assert not stacks.get("linux-6", cat).knob_values().get("cwnd_moderation", False)
    # CUBIC v2.0 with the 2.6.18 scaling error for 2.6.16; 2.6.24's v2.1 for 2.6.25.
    for name, version in (("linux-2.6.16", "2.0"), ("linux-2.6.25", "2.1")):
        assert stacks.get(name, cat).params_for("cubic")["version"] == version, name
    # Linux 2.6.16-3.19: cnt >= 1 and +1 segment per cnt + 1 ACKs; v2.x always compensate for
    # delayed ACKs, v2.3 (2.6.29, 2.6.39) through delayed_ack_comp.
    for name in ("linux-2.6.16", "linux-2.6.25", "linux-2.6.29", "linux-2.6.39"):
        p = stacks.get(name, cat).params_for("cubic")
        assert (p["ai_rule"], p["undo_rule"]) == ("linux-2.6", "w_max"), name
    assert "ai_rule" not in stacks.get("linux-6", cat).params_for("cubic")
    # HyStart's pacing-aware ACK-train allowance came with Linux 5.7 (tcp_cubic.c); its clock
    # was jiffies in 2.6.29-2.6.38 and ms in 2.6.39, where CUBIC also asked for µs samples.
    old_hystart = {
        "linux-2.6.29": {
            "hystart_clock": "jiffies",
            "hystart_jiffy_us": 4000,
            "unknown_wmax_cap": False,
            "ai_rule": "linux-2.6",
            "delayed_ack_comp": True,
            "undo_rule": "w_max",
        },
        "linux-2.6.39": {
            "hystart_clock": "ms",
            "rtt_stamp": True,
            "ai_rule": "linux-2.6",
            "delayed_ack_comp": True,
            "undo_rule": "w_max",
        },
        "linux-6": {},
    }
    for name, ack_delay in (("linux-2.6.29", False), ("linux-2.6.39", False), ("linux-6", True)):
        p = stacks.get(name, cat).params_for("cubic")
        want = {"version": "rfc9438", "hystart": "linux", "hystart_ack_delay": ack_delay}
        # Every Linux CUBIC keeps its window update on the jiffy clock (HZ 250: 4000 µs).
        want |= {"jiffy_clock": True, "hystart_jiffy_us": 4000}
        assert p == want | old_hystart[name], name
    for name in ("linux-2.6.16", "linux-2.6.25"):
        p = stacks.get(name, cat).params_for("cubic")
        assert (p["jiffy_clock"], p["hystart_jiffy_us"]) == (True, 4000), name
    # Linux 2.6.23-3.11: the controller's own RTT sample (tcp_clean_rtx_queue).
    for name, sampling in (
        ("linux-2.6.16", "timestamps"),
        ("linux-2.6.25", "linux-2.6"),
        ("linux-2.6.29", "linux-2.6"),
        ("linux-2.6.39", "linux-2.6"),
        ("linux-6", "linux"),
    ):
        knobs = {k: cat.knobs[k].default for k in cat.knobs} | stacks.get(name, cat).knob_values()
        assert knobs["rtt_sampling"] == sampling, name


GOOD_FILE = """
name = "x"
description = "a test stack"
os = "Test"
[cca]
name = "reno"
source = "a test"
verified = true
[knobs.min_rto]
value = "300ms"
source = "a test"
verified = true
"""


@needs_core
@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (lambda t: t.replace("min_rto]", "min_rtoo]"), ["knobs.min_rtoo", "mean 'min_rto'"]),
        (lambda t: t.replace('"300ms"', "300"), ["knobs.min_rto.value", "300"]),
        (lambda t: t.replace('value = "300ms"\nsource = "a test"\n', 'value = "300ms"\n'),
         ["knobs.min_rto.source", "missing"]),
        (lambda t: t.replace("verified = true\n", "", 2), ["verified", "missing or not a boolean"]),
        (lambda t: t.replace('"300ms"\nsource = "a test"\nverified = true',
                             '"300ms"\nsource = "a test"\nverified = false'),
         ["knobs.min_rto", "needs a note"]),
        (lambda t: t.replace('os = "Test"', 'os = "Test"\ncolour = 1'), ["colour", "unknown key"]),
        (lambda t: t.replace("[cca]\nname", "[cca]\nnam"), ["cca.nam", "unknown key"]),
    ],
)  # fmt: skip
def test_loader_rejects_bad_personality_files(change, fragments):
    cat = core_catalog()
    stacks.parse(GOOD_FILE, "x.toml", cat)  # the unchanged file is valid
    with pytest.raises(stacks.StackError) as ei:
        stacks.parse(change(GOOD_FILE), "x.toml", cat)
    msg = str(ei.value)
    assert "x.toml" in msg
    for f in fragments:
        assert f in msg


def test_none_unsets_an_optional_knob_only():
    rx = tcplab.catalog.Param("rx_capacity", "rate", None)
    assert stacks.convert_knob(rx, "none") is None
    assert stacks.convert_knob(rx, "200Mbit") == 200_000_000
    rto = tcplab.catalog.Param("min_rto", "duration", 1 * S)
    with pytest.raises(tcplab.units.UnitError):
        stacks.convert_knob(rto, "none")


# ============================================================================ scenario resolution


@needs_core
def test_generic_is_the_default_stack_and_adds_no_knobs():
    sc = load(base(cca="reno"), catalog=resolution_catalog())
    (f,) = sc.config(1)["flows"]
    assert f["tcp"] == {} and f["receiver_tcp"] == {}
    assert sc.resolved["stack"] == "generic"
    assert sc.flows[0].sender_stack == sc.flows[0].receiver_stack == "generic"


@needs_core
def test_sender_and_receiver_stacks_resolve_separately():
    cat = resolution_catalog()
    doc = base(sender_stack="linux-2.4.27", receiver_stack="windows-xp")
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"] == stacks.get("linux-2.4.27", cat).knob_values()
    assert f["receiver_tcp"] == stacks.get("windows-xp", cat).knob_values()
    assert f["cca"] == {"name": "reno", "params": {"ai_rule": "linux-2.6"}}  # linux-2.4.27 default
    # the top-level stack is the default of both ends
    doc = base()
    doc["stack"] = "openbsd-3.5"
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"] == f["receiver_tcp"] == stacks.get("openbsd-3.5", cat).knob_values()
    assert f["cca"]["name"] == "newreno"
    doc["flow"][0]["receiver_stack"] = "freebsd-5.3"
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"]["delack_timeout"] == 300 * MS
    assert f["receiver_tcp"]["delack_timeout"] == 100 * MS
    assert f["receiver_tcp"]["quirk_invalid_sack_fraction"] == 0.05


@needs_core
def test_resolution_order_personality_then_tcp_then_window_then_flow_tcp():
    cat = resolution_catalog()
    doc = base(
        sender_stack="windows-xp",
        receiver_stack="linux-2.6.25",
        window="1MB",
        tcp={"min_rto": "250ms", "initial_window": 3},
        receiver_tcp={"delack_timeout": "100ms", "rx_capacity": "1Gbit"},
    )
    doc["tcp"] = {"min_rto": "500ms", "sack": False, "initial_window": 4}
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    xp = stacks.get("windows-xp", cat).knob_values()
    lx = stacks.get("linux-2.6.25", cat).knob_values()
    # sender: personality < [tcp] < window < [flow.tcp]
    assert f["tcp"]["rcvbuf"] == f["tcp"]["sndbuf"] == 1_000_000  # window beats XP's 16,384 B
    assert f["tcp"]["rcvbuf_round_to_mss"] is False  # a configured window is not rounded
    assert f["tcp"]["min_rto"] == 250 * MS  # [flow.tcp] beats [tcp] beats XP's 300 ms
    assert f["tcp"]["initial_window"] == 3
    assert f["tcp"]["sack"] is False  # [tcp]
    assert f["tcp"]["quirk_ignore_rwnd_in_recovery"] is True  # XP, untouched
    assert f["tcp"]["timestamps"] is xp["timestamps"] is True  # answered ...
    assert f["tcp"]["timestamps_offer"] is xp["timestamps_offer"] is False  # ... never offered
    # receiver: its own personality < [tcp] < window < [flow.tcp] < [flow.receiver_tcp]
    r = f["receiver_tcp"]
    assert r["rwnd_initial_segments"] == lx["rwnd_initial_segments"] == 4
    assert r["timestamps"] is True and r["cwnd_unit"] == "packets"
    assert r["rcvbuf"] == 1_000_000 and r["sack"] is False and r["min_rto"] == 250 * MS
    assert r["delack_timeout"] == 100 * MS  # receiver_tcp beats Linux's 40 ms
    assert r["rx_capacity"] == 1_000_000_000
    assert "quirk_ignore_rwnd_in_recovery" not in r
    # window = iperf -w fixes the buffer: autotuning off on the receiver
    assert lx["rcvbuf_autotune_max"] is not None and r["rcvbuf_autotune_max"] is None
    # without window, autotuning stays
    del doc["flow"][0]["window"]
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["receiver_tcp"]["rcvbuf_autotune_max"] == lx["rcvbuf_autotune_max"]
    assert f["tcp"]["rcvbuf"] == xp["rcvbuf"] == 16384
    assert f["tcp"]["rcvbuf_round_to_mss"] is xp["rcvbuf_round_to_mss"] is True


@needs_core
@pytest.mark.parametrize(
    ("flow", "rcv_tcp", "rounded", "rcv_rounded"),
    [
        ({}, None, True, True),  # the personality: 16 KB, rounded to segments once established
        ({"window": "256KiB"}, None, False, False),  # TcpWindowSize set: no rounding
        ({"tcp": {"rcvbuf": 65535}}, None, False, False),
        ({"tcp": {"rcvbuf": 65535, "rcvbuf_round_to_mss": True}}, None, True, True),
        ({}, {"rcvbuf": 32768}, True, False),  # the receiving host's own window only
    ],
)
def test_a_configured_window_overrides_windows_default_window_algorithm(
    flow, rcv_tcp, rounded, rcv_rounded
):
    """windows-xp's window is 16,384 B in the SYN, rounded up to whole segments once the
    connection is established (KB 224829); a window the scenario sets (TcpWindowSize: "overrides
    the default window size algorithm") is used as it is (stacks/rules.py)."""
    cat = resolution_catalog()
    doc = base(sender_stack="windows-xp", receiver_stack="windows-xp", **flow)
    if rcv_tcp is not None:
        doc["flow"][0]["receiver_tcp"] = rcv_tcp
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"]["rcvbuf_round_to_mss"] is rounded
    assert f["receiver_tcp"]["rcvbuf_round_to_mss"] is rcv_rounded


@needs_core
@pytest.mark.parametrize(
    ("stack", "flow", "rcv_tcp", "syn_window", "rcv_syn_window"),
    [
        ("windows-7", {}, None, 8192, 8192),  # the personality: 8 KB SYN / SYN-ACK window
        ("windows-vista", {}, None, 8192, 8192),
        ("windows-server-2008", {}, None, 8192, 8192),
        ("windows-7", {"window": "64MiB"}, None, 0, 0),  # SO_RCVBUF set: the buffer
        ("windows-7", {"tcp": {"rcvbuf": 65535}}, None, 0, 0),
        ("windows-7", {"tcp": {"syn_window": 4096}}, None, 4096, 4096),
        ("windows-7", {}, {"rcvbuf": 32768}, 8192, 0),  # the receiving host's own window only
        ("windows-xp", {}, None, 0, 0),  # XP: 16,384 B, its rcvbuf (KB 224829)
    ],
)
def test_vista_era_windows_offer_8kb_in_syn_unless_the_window_is_configured(
    stack, flow, rcv_tcp, syn_window, rcv_syn_window
):
    """Windows Vista / 7 / Server 2008 at their defaults offer 8,192 B in the SYN and SYN-ACK
    beside window scale 8 (p0f 3.09b p0f.fp; nmap-os-db W = 0x2000); a window the scenario sets
    (SO_RCVBUF) is offered as it is (stacks/rules.py, as XP's TcpWindowSize), unless the
    scenario sets `syn_window` itself."""
    cat = resolution_catalog()
    doc = base(sender_stack=stack, receiver_stack=stack, **flow)
    if rcv_tcp is not None:
        doc["flow"][0]["receiver_tcp"] = rcv_tcp
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"].get("syn_window", 0) == syn_window
    assert f["receiver_tcp"].get("syn_window", 0) == rcv_syn_window


@needs_core
@pytest.mark.parametrize(
    ("receiver", "first_flight"),
    [("windows-7", 5), ("windows-vista", 5), ("windows-server-2008", 5), ("windows-xp", 10)],
)
def test_syn_ack_window_bounds_an_iw10_senders_first_flight(receiver, first_flight):
    """A Linux 2.6.39 sender (IW 10) to a Windows receiver without timestamps: the SYN-ACK's
    window bounds the first flight until the receiver's first ACK — 8,192 B (five 1460-B
    segments) from Vista / 7 / Server 2008 (p0f 3.09b, nmap-os-db); from XP 16,384 B (KB 224829),
    so the initial window of ten bounds it. The segments sent before the first ACK reaches the
    sender are counted."""
    doc = {
        "duration": "1s",
        "path": {"rate": "100Mbit", "rtt": "100ms"},
        "tcp": {"timestamps": False},
        "flow": [{"name": "f", "cca": "reno", "sender_stack": "linux-2.6.39",
                  "receiver_stack": receiver, "bytes": 100_000}],
    }  # fmt: skip
    pk = Packets(simulate(doc, ["host:f.snd"])["packets"])
    data = pk.data()
    t0 = data[0][0]
    # The first ACK for data returns one round trip (100 ms) after the first segment left.
    early = [p for p in data if p[0] < t0 + 50 * MS]
    assert len(early) == first_flight, [p[8] for p in early]


@needs_core
@pytest.mark.parametrize(
    ("tcp", "offer"),
    [
        ({}, False),  # the personality: no window scale in XP's SYN below 64 KB
        ({"window_scaling": True}, True),  # Tcp1323Opts set: offered at shift 0 too
        ({"window_scaling": True, "window_scaling_offer_unscaled": False}, False),
        ({"window_scaling": False}, False),
    ],
)
def test_a_scenario_that_enables_window_scaling_makes_xp_offer_it(tcp, offer):
    """windows-xp sends the window-scale option only for a window above 64 KB (p0f's XP SYNs);
    a scenario's `window_scaling = true` is a host configured to scale, which offers it at any
    window (p0f 3.00b's XP SYNs with shift 0), unless the scenario sets the knob itself."""
    cat = resolution_catalog()
    doc = base(sender_stack="windows-xp", receiver_stack="windows-xp", tcp=tcp)
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"]["window_scaling_offer_unscaled"] is offer


@needs_core
@pytest.mark.parametrize(
    ("tcp", "offer"),
    [
        ({}, False),  # the personality: answer only
        ({"timestamps": True}, True),  # the scenario means the connection: offered too
        ({"timestamps": True, "timestamps_offer": False}, False),
        ({"timestamps": False}, False),
    ],
)
def test_a_scenario_that_enables_timestamps_makes_an_answer_only_stack_offer_them(tcp, offer):
    """windows-xp answers a timestamp offer but makes none; a scenario's `timestamps = true` is a
    host configured to use them, which offers them as well (stacks/rules.py), unless the scenario
    sets `timestamps_offer` itself."""
    cat = resolution_catalog()
    doc = base(sender_stack="windows-xp", receiver_stack="windows-xp", tcp=tcp)
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["tcp"]["timestamps_offer"] is offer
    assert f["tcp"]["timestamps"] is tcp.get("timestamps", True)


@needs_core
def test_none_lifts_a_personality_limit():
    cat = resolution_catalog()
    doc = base(receiver_stack="windows-xp", receiver_tcp={"rx_capacity": "none"})
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["receiver_tcp"]["rx_capacity"] is None


@needs_core
def test_cca_defaults_to_the_sender_stack_with_its_parameters():
    cat = resolution_catalog()
    cases = {
        "linux-2.6.10": {"name": "bic", "params": {"variant": "2.6.10", "ai_rule": "linux-2.6"}},
        "linux-2.6.25": {
            "name": "cubic",
            "params": {
                "hystart": "off",
                "version": "2.1",
                "initial_ssthresh": 0,
                "ai_rule": "linux-2.6",
                "undo_rule": "w_max",
                "hystart_jiffy_us": 4000,
                "jiffy_clock": True,
            },
        },
        "windows-server-2008": {"name": "ctcp", "params": {}},
        "windows-xp": {"name": "newreno", "params": {}},
    }
    for name, cca in cases.items():
        (f,) = load(base(sender_stack=name, receiver_stack="generic"), catalog=cat).config(1)[
            "flows"
        ]
        assert f["cca"] == cca, name
    # a flow's own cca wins; the stack's implementation parameters still apply under its own
    doc = base(sender_stack="linux-2.6.25", cca={"name": "cubic", "beta": 0.75})
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["cca"]["params"]["beta"] == 0.75 and f["cca"]["params"]["version"] == "2.1"
    doc = base(sender_stack="linux-2.6.25", cca={"name": "cubic", "version": "rfc9438"})
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["cca"]["params"]["version"] == "rfc9438"
    # a table without a name means the sender stack's default algorithm
    doc = base(sender_stack="linux-2.6.10", cca={"variant": "linux"})
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["cca"] == {"name": "bic", "params": {"variant": "linux", "ai_rule": "linux-2.6"}}
    # another algorithm gets none of the default's parameters, only its own implementation's
    doc = base(sender_stack="linux-2.6.10", cca="reno")
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["cca"] == {"name": "reno", "params": {"ai_rule": "linux-2.6"}}
    doc = base(sender_stack="windows-xp", cca="reno")
    (f,) = load(doc, catalog=cat).config(1)["flows"]
    assert f["cca"] == {"name": "reno", "params": {}}


@needs_core
def test_stack_default_cca_missing_from_the_engine_is_reported():
    knobs = tcplab.catalog.load_core().tcp_knobs()
    cat = Catalog.from_lists(knobs, [{"name": "reno", "params": []}])
    doc = base()
    doc["stack"] = "windows-server-2008"
    with pytest.raises(tcplab.ScenarioError) as ei:
        load(doc, catalog=cat)
    assert ei.value.field == "stack"
    assert "'ctcp'" in str(ei.value) and "set cca for the flow" in str(ei.value)
    doc["flow"][0]["cca"] = "reno"  # a flow that names its algorithm is fine
    load(doc, catalog=cat)


@needs_core
def test_unknown_stack_names_get_the_nearest_name():
    cat = resolution_catalog()
    doc = base(sender_stack="linux-2.6.1")
    with pytest.raises(tcplab.ScenarioError) as ei:
        load(doc, catalog=cat)
    assert ei.value.field == "flow.0.sender_stack"
    assert "did you mean 'linux-2.6.16'" in str(ei.value)
    doc = base(receiver_stack="windows-vist")
    with pytest.raises(tcplab.ScenarioError) as ei:
        load(doc, catalog=cat)
    assert ei.value.field == "flow.0.receiver_stack" and "did you mean 'windows-vista'" in str(
        ei.value
    )
    doc = base()
    doc["stack"] = "openbsd"
    with pytest.raises(tcplab.ScenarioError) as ei:
        load(doc, catalog=cat)
    assert ei.value.field == "stack" and "did you mean 'openbsd-3.5'" in str(ei.value)
    with pytest.raises(stacks.StackError, match=r"did you mean 'freebsd-5\.3'"):
        stacks.get("freebsd-5.4", cat)
    # stacks are for TCP flows only
    doc = base(kind="udp", rate="1Mbit", sender_stack="linux-6")
    with pytest.raises(tcplab.ScenarioError, match="only for tcp flows"):
        load(doc, catalog=cat)


@needs_core
def test_resolved_scenario_with_stacks_reproduces_the_config(tmp_path):
    cat = resolution_catalog()
    doc = base(sender_stack="linux-2.6.29", window="256KiB", receiver_tcp={"rcvbuf": "64KB"})
    doc["stack"] = "windows-7"
    sc = load(doc, catalog=cat)
    p = tmp_path / "r.toml"
    p.write_text(sc.resolved_toml())
    again = load(p, catalog=cat)
    assert again.config(3) == sc.config(3)
    assert again.resolved["stack"] == "windows-7"
    assert "[linux-2.6.29 -> windows-7]" in sc.topology_text()


# ============================================================================ command line


@needs_core
def test_list_stacks_names_every_stack_with_its_default_cca(capsys):
    assert main(["list", "stacks"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line.strip()}
    for name in ALL:
        st = stacks.get(name)
        assert rows[name] == st.cca
        assert st.description in out


@needs_core
@pytest.mark.parametrize("name", ["windows-xp", "linux-2.6.10", "generic"])
def test_show_stack_prints_every_knob_with_value_difference_and_source(name, capsys):
    assert main(["show", "stack", name]) == 0
    out = capsys.readouterr().out
    cat = core_catalog()
    st = stacks.get(name, cat)
    lines = out.splitlines()
    assert lines[0].startswith(f"{name}: {st.description}")
    assert f"default congestion control: {st.default_cca_text()}" in out
    # one block per knob: a row "* name  value  [status]" (or "  name ..."), then indented lines
    knob_lines = lines[next(i for i, ln in enumerate(lines) if ln.startswith("knobs (")) + 1 :]
    blocks: dict[str, list[str]] = {}
    for ln in knob_lines:
        if ln[:1] in ("*", " ") and ln[2:3] not in (" ", ""):
            blocks[ln[2:].split()[0]] = [ln]
        else:
            list(blocks.values())[-1].append(ln)
    assert list(blocks) == list(cat.knobs)  # every knob, in the engine's order
    for knob, param in cat.knobs.items():
        block = blocks[knob]
        row, src = block[0], block[1]
        s = st.knobs.get(knob)
        value = s.value if s is not None else param.default
        assert row[2:].split()[1] == stacks.show_value(param, value)
        differs = s is not None and s.value != param.default
        assert row.startswith("*") == differs, row
        assert ("differs from default" in row) == differs
        assert src.strip().startswith("source: ")
        if s is not None:
            assert s.source in src
            text = "\n".join(block)
            assert ("UNVERIFIED (assumption)" in text) == (not s.verified)
            assert ("APPROXIMATE" in text) == s.approximate
        else:
            assert "not set by this stack" in src


@needs_core
def test_show_unknown_stack_exits_2_with_the_nearest_name(capsys):
    assert main(["show", "stack", "windows-x"]) == 2
    assert "did you mean 'windows-xp'" in capsys.readouterr().err


# ============================================================================ packet level

_WORKER = r"""
import json, struct, sys
import tcplab
doc, pcap = json.loads(sys.stdin.read())
r = tcplab.run(doc, pcap=pcap or None)
raw = r.raw[0]
out = {"flows": raw["flows"], "links": raw["links"], "series": raw["series"], "packets": []}
for path in r.captures:
    data = open(path, "rb").read()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B23C4D  # pcap, nanosecond timestamps
    off = 24
    while off < len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off : off + 16])
        pkt = data[off + 16 : off + 16 + incl]
        off += 16 + incl
        ip = pkt[14:]  # Ethernet, then IPv4
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:]
        sp, dp, seq, ack, doff, flags, win = struct.unpack(">HHIIBBH", tcp[:16])
        doff = (doff >> 4) * 4
        opts, ws, i = tcp[20:doff], None, 0
        while i < len(opts) and opts[i] != 0:
            if opts[i] == 1:
                i += 1
                continue
            if opts[i] == 3:
                ws = opts[i + 2]
            i += max(opts[i + 1], 2)
        out["packets"].append([sec * 10**9 + frac, sp, dp, seq, ack, flags, win, ws,
                               total - ihl - doff])
json.dump(out, sys.stdout)
"""


class Packets:
    """One TCP connection's packets as captured at its sender host (tcplab.capture)."""

    def __init__(self, rows: list[list[int]]) -> None:
        self.rows = rows
        self.sport = rows[0][1]  # the SYN
        self.syn_t = rows[0][0]
        acks = self.acks()
        self.wscale = acks[0][7] or 0  # from the SYN-ACK

    def data(self) -> list[list[int]]:
        return [p for p in self.rows if p[1] == self.sport and p[8] > 0]

    def acks(self) -> list[list[int]]:
        return [p for p in self.rows if p[2] == self.sport]

    def data_acks(self) -> list[list[int]]:
        isn = self.rows[0][3]
        return [p for p in self.acks()[1:] if (p[4] - isn) % 2**32 > 1]

    def window(self, ack: list[int]) -> int:
        return ack[6] << self.wscale


class SimulationFailed(Exception):
    pass


def simulate(doc: dict[str, Any], pcap: list[str] | None = None, timeout: float = 30) -> dict:
    """Run *doc* with the built engine in a child process, killed after *timeout* s (the runs
    here take well under a second); fails the test if it does not finish or fails."""
    try:
        return _simulate(doc, pcap, timeout)
    except SimulationFailed as e:
        pytest.fail(str(e))


def _simulate(doc: dict[str, Any], pcap: list[str] | None, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    try:
        p = subprocess.run(
            [sys.executable, "-c", _WORKER],
            input=json.dumps([doc, pcap]),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise SimulationFailed(
            f"the engine did not finish within {timeout:.0f} s (scenario {doc})"
        ) from None
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SimulationFailed(f"the simulation failed: {last}")
    return json.loads(p.stdout)


def j1_doc(stack: str, **flow: Any) -> dict[str, Any]:
    """J1 (seed-experiments.md): the first second on a 2 Mbit/s, 200 ms path, default buffers.

    The algorithm is fixed to reno: the first second is slow start, where the algorithms of these
    stacks agree, so the checks below test the personality's knobs whatever CCAs this build has
    (test_each_stack_runs_with_its_default_cca covers those)."""
    return {
        "name": "j1",
        "duration": "1500ms",
        "interval": "100ms",
        "stack": stack,
        "path": {"rate": "2Mbit", "rtt": "200ms"},
        "flow": [{"name": "f", "cca": "reno", "tcp": {"isn": 0}, **flow}],
    }


@cache
def _j1(stack: str) -> Packets | str:
    try:
        return Packets(_simulate(j1_doc(stack), ["host:f.snd"], 30)["packets"])
    except SimulationFailed as e:  # remembered, so the other J1 tests of the stack fail at once
        return str(e)


def j1(stack: str) -> Packets:
    got = _j1(stack)
    if isinstance(got, str):
        pytest.fail(got)
    return got


@cache
def knobs_of(stack: str) -> dict[str, Any]:
    cat = core_catalog()
    return {k: p.default for k, p in cat.knobs.items()} | stacks.get(stack, cat).knob_values()


def smss(k: dict[str, Any]) -> int:
    # MTU 1500 − 40 B of headers − 12 B of timestamp option when negotiated (both ends alike
    # here: in use when the stack offers it, RFC 7323 §3.2)
    return 1460 - (12 if k["timestamps"] and k["timestamps_offer"] else 0)


def iw_segments(k: dict[str, Any]) -> int:
    mss, iw = smss(k), k["initial_window"]
    if iw == "rfc3390":  # RFC 3390 §1
        iw_bytes = min(4 * mss, max(2 * mss, 4380))
    elif iw == "rfc6928":  # RFC 6928 §2
        iw_bytes = min(10 * mss, max(2 * mss, 14600))
    else:
        iw_bytes = iw * mss
    return iw_bytes // mss


J1_RTT = 200 * MS
J1_SEGMENT_TIME = 1500 * 8 * S // 2_000_000  # a full-sized packet at 2 Mbit/s: 6 ms


@needs_core
@pytest.mark.parametrize("stack", ALL)
def test_j1_initial_window(stack):
    """Bytes sent before the first ACK of data returns = the initial window (full segments)."""
    pk = j1(stack)
    k = knobs_of(stack)
    first_ack = pk.data_acks()[0][0]
    sent = [p for p in pk.data() if p[0] < first_ack]
    assert all(p[8] == smss(k) for p in sent)
    assert len(sent) == iw_segments(k), f"{stack}: {len(sent)} segments in the first RTT"


@needs_core
@pytest.mark.parametrize("stack", ALL)
def test_j1_first_ack_waits_for_the_delayed_ack_timer_only_with_iw_1(stack):
    """The first ACK comes one RTT after the segment that triggers it has crossed the bottleneck:
    the first segment with quick-ACK (Linux), else the second (an ACK for every second segment),
    and with an initial window of one segment the delayed-ACK timer's expiry instead (OpenBSD
    300 ms, FreeBSD 5.2.1 100 ms)."""
    pk = j1(stack)
    k = knobs_of(stack)
    sent = [p[0] for p in pk.data()]
    delay = pk.data_acks()[0][0] - sent[0]
    timer = 0
    if k["quickack_segments"] > 0 or not k["delayed_ack"]:
        trigger = 0  # ACKed at once
    elif iw_segments(k) >= k["delack_segments"]:
        trigger = k["delack_segments"] - 1
    else:
        trigger, timer = 0, k["delack_timeout"]
    # the trigger leaves the 2 Mbit/s bottleneck after every segment before it (a FIFO queue)
    seg = J1_SEGMENT_TIME
    crossed = max(sent[j] - sent[0] + (trigger - j + 1) * seg for j in range(trigger + 1))
    expected = J1_RTT + crossed + timer
    # access links (20 Mbit/s) and the ACK's own transmission add about 1.5 ms
    assert expected <= delay <= expected + 3 * MS, f"{stack}: first ACK after {delay / MS} ms"


@needs_core
def test_j1_openbsd_waits_300ms_and_the_others_at_most_200ms():
    delay = {s: j1(s).data_acks()[0][0] - j1(s).data()[0][0] for s in J1_STACKS}
    assert delay["openbsd-3.5"] > J1_RTT + 300 * MS
    for s in J1_STACKS:
        if s != "openbsd-3.5":
            assert delay[s] < J1_RTT + 200 * MS, s


@needs_core
@pytest.mark.parametrize("stack", ALL)
def test_j1_advertised_window_grows_only_on_linux(stack):
    pk = j1(stack)
    k = knobs_of(stack)
    end = pk.syn_t + 1 * S
    wins = [pk.window(a) for a in pk.data_acks() if a[0] <= end]
    assert len(wins) >= 2
    gran = 1 << pk.wscale
    initial = k["rwnd_initial_segments"] or k["rwnd_initial_bytes"] // smss(k)
    if initial > 0:
        # Linux: starts at a few segments (rcv_ssthresh; >= 4.19 about 64 KB) and grows with
        # every full segment; 2.6 rounds a scaled window up to the scale's granularity
        # (__tcp_select_window, knob rcv_wnd_rule)
        assert wins[0] < (initial + 2) * smss(k) + gran
        assert wins[-1] > wins[0] and wins == sorted(wins)
    else:
        # the others offer their whole buffer from the start and keep it (J1: only Linux grows);
        # Windows XP's 16,384 B rounded up to whole segments once established (KB 224829)
        buf = k["rcvbuf"]
        if k.get("rcvbuf_round_to_mss"):
            buf = -(-buf // smss(k)) * smss(k)
        assert min(wins) == max(wins)
        assert buf - gran < wins[0] <= buf


@needs_core
def test_j1_first_second_linux_delivers_most_openbsd_least():
    """Bytes acknowledged 1 s after the SYN (J1's published ordering, Jansen & McGregor 2005)."""

    def acked(stack: str) -> int:
        pk = j1(stack)
        return max(a[4] for a in pk.acks() if a[0] <= pk.syn_t + 1 * S) - pk.rows[0][3] - 1

    got = {s: acked(s) for s in J1_STACKS}
    others = [s for s in J1_STACKS if not s.startswith("linux")]
    assert all(got["linux-2.6.10"] > got[s] for s in J1_STACKS if s != "linux-2.6.10"), got
    assert all(got["linux-2.4.27"] >= got[s] for s in others), got
    assert all(got["openbsd-3.5"] < got[s] for s in J1_STACKS if s != "openbsd-3.5"), got


@needs_core
@pytest.mark.parametrize("stack", REQUIRED)
def test_each_stack_runs_with_its_default_cca(stack):
    """No cca in the flow: the sender stack's default algorithm, with its parameters, must be
    accepted and run by the engine (1 s, a 10 Mbit/s path)."""
    cat = core_catalog()
    st = stacks.get(stack, cat)
    assert st.cca in cat.ccas, f"this engine does not provide {st.cca!r} ({stack}'s default)"
    for p in st.params_for(st.cca):
        assert p in cat.ccas[st.cca].params, f"this engine's {st.cca} has no parameter {p!r}"
    doc = {"duration": "1s", "stack": stack, "path": {"rate": "10Mbit", "rtt": "50ms"},
           "flow": [{"name": "f"}]}  # fmt: skip
    sc = load(doc)
    assert sc.flows[0].cca["name"] == st.cca
    assert sc.flows[0].cca["params"] == {
        k: cat.ccas[st.cca].params[k].convert(v) for k, v in st.params_for(st.cca).items()
    }
    res = simulate(doc)
    assert res["flows"][0]["bytes_delivered"] > 0


# ---------------------------------------------------------------------------- quirks


def _beyond_window(pk: Packets) -> int:
    """Data segments sent past the right edge of every window the receiver had offered before."""
    edge, beyond = 0, 0
    for p in pk.rows:
        if p[2] == pk.sport and p[5] & 0x10 and not p[5] & 0x02:  # ACKs, not the SYN-ACK
            edge = max(edge, (p[4] - pk.rows[0][3]) + pk.window(p))
        elif p[1] == pk.sport and p[8] > 0 and edge:
            beyond += (p[3] - pk.rows[0][3]) + p[8] > edge
    return beyond


@needs_core
@pytest.mark.parametrize("quirk", [True, False])
def test_windows_xp_sends_beyond_the_advertised_window_during_recovery(quirk):
    """J4: an XP sender limited by an XP receiver's 17,520 B window loses two segments; with the
    quirk it sends new data past the advertised window during recovery, which the receiver
    discards and the sender later sends again (Jansen & McGregor 2005)."""
    doc = {
        "duration": "5s",
        "interval": "100ms",
        "stack": "windows-xp",
        "path": {"rate": "10Mbit", "rtt": "100ms", "loss": {"model": "list", "packets": [40, 41]}},
        "flow": [{"name": "f", "cca": "newreno",
                  "tcp": {"isn": 0, "quirk_ignore_rwnd_in_recovery": quirk}}],
    }  # fmt: skip
    res = simulate(doc, ["host:f.snd"])
    f = res["flows"][0]
    pk = Packets(res["packets"])
    assert f["fast_retransmits"] >= 1 and f["sack_blocks"] > 0  # a SACK recovery happened
    if quirk:
        assert f["sent_beyond_rwnd"] > 0
        assert _beyond_window(pk) > 0
        assert f["rx_beyond_window"] > 0  # the receiver dropped them ...
        assert f["retransmits"] > 2  # ... and they were sent again
    else:
        assert f["sent_beyond_rwnd"] == 0
        assert _beyond_window(pk) == 0
        assert f["rx_beyond_window"] == 0


@needs_core
@pytest.mark.parametrize("quirk", [True, False])
def test_freebsd_53_receiver_sends_invalid_sack_blocks(quirk):
    """J4: Windows XP sending to FreeBSD 5.3 under 1% loss; the receiver corrupts its personality's
    fraction of SACK blocks, which the sender must ignore and count (RFC 2018 §3: a block no
    correct receiver can send)."""
    frac = stacks.get("freebsd-5.3").knob_values()["quirk_invalid_sack_fraction"]
    doc = {
        "duration": "60s",
        "path": {"rate": "10Mbit", "rtt": "50ms", "loss": "1%"},
        "flow": [{"name": "f", "cca": "newreno", "sender_stack": "windows-xp",
                  "receiver_stack": "freebsd-5.3", "window": "256KiB",
                  "receiver_tcp": {"quirk_invalid_sack_fraction": frac if quirk else 0.0}}],
    }  # fmt: skip
    f = simulate(doc)["flows"][0]
    n = f["sack_blocks"]
    assert n > 500  # enough blocks to see the fraction
    if quirk:
        # every corrupted block must be recognisable as invalid: binomial(n, frac), 4 sigma
        sigma = math.sqrt(n * frac * (1 - frac))
        assert n * frac - 4 * sigma <= f["invalid_sack_blocks"] <= n * frac + 4 * sigma, f
    else:
        assert f["invalid_sack_blocks"] == 0


@needs_core
@pytest.mark.parametrize("stack", ["windows-xp", "windows-vista"])
@pytest.mark.parametrize("limited", [True, False])
def test_windows_client_receive_limit_caps_goodput_with_dupacks_and_no_path_loss(stack, limited):
    """I1: a CUBIC sender to a tuned XP / Vista client on an uncongested 1 Gbit/s path: goodput
    settles at the client's receive capacity, with duplicate ACKs although the path drops
    nothing (Iwanaga et al.); without the limit the flow fills the path. (Goodput is the mean of
    the 1 s samples after 8 s, once CUBIC has reached the limit.)"""
    cap = stacks.get(stack).knob_values()["rx_capacity"]
    doc = {
        "duration": "20s",
        "path": {"rate": "1Gbit", "rtt": "20ms", "queue": "10000pkt"},
        "flow": [{"name": "f", "cca": "cubic", "sender_stack": "generic",
                  "receiver_stack": stack, "window": "16MiB",
                  "receiver_tcp": {} if limited else {"rx_capacity": "none"}}],
    }  # fmt: skip
    res = simulate(doc)
    f = res["flows"][0]
    ser = res["series"]
    late = [g for t, g in zip(ser["time_ns"], ser["goodput_bps"], strict=True) if t > 8 * S]
    goodput = sum(late) / len(late)
    bottleneck = [ln for ln in res["links"] if ln["name"] == "bottleneck"]
    assert all(ln["drops"] == 0 and ln["lost"] == 0 for ln in bottleneck)
    payload = 1460  # timestamps are not negotiated with a Windows client
    if limited:
        ceiling = cap * payload / 1500
        assert 0.9 * ceiling <= goodput <= ceiling * 1.001, goodput
        assert f["dupacks"] > 0
    else:
        assert goodput >= 0.8 * 1e9  # fills the path
        assert f["dupacks"] == 0


@needs_core
@pytest.mark.parametrize(
    ("sender", "receiver", "ts"),
    [
        ("linux-2.6.25", "windows-xp", True),
        ("linux-2.6.25", "windows-7", True),
        ("windows-xp", "linux-2.6.25", False),
        ("windows-xp", "windows-xp", False),
        ("windows-7", "linux-2.6.25", False),
        ("linux-2.6.25", "windows-vista", True),
        ("linux-2.6.25", "windows-server-2008", True),
        ("windows-vista", "linux-2.6.25", False),
        ("windows-server-2008", "windows-7", False),
        ("linux-2.6.25", "linux-2.6.25", True),
    ],
)
def test_windows_answers_timestamps_it_never_offers(sender, receiver, ts):
    """Timestamps are in use only when both the SYN and the SYN-ACK carry the option (RFC 7323
    §3.2). Windows XP (p0f's fingerprints, KB 224829), Vista, 7 and Server 2008 (nmap-os-db's
    SYN-ACKs to its timestamped probes, p0f 3.09b's "7 or 8") answer an offer but never make
    one. A data segment carries 1448 B with the option, 1460 B without."""
    doc = {
        "duration": "2s",
        "path": {"rate": "10Mbit", "rtt": "20ms"},
        "flow": [{"name": "f", "cca": "reno", "sender_stack": sender, "receiver_stack": receiver}],
    }
    pk = Packets(simulate(doc, ["host:f.snd"])["packets"])
    sizes = [p[8] for p in pk.data()]
    # Full segments only: every receiver here offers whole segments (XP rounds its window up to
    # them, KB 224829; Linux 2.x's __tcp_select_window rounds an unscaled window down to them,
    # knob rcv_wnd_rule). Before 2026-11-30 the Linux receiver offered 65,535 B unscaled and an
    # XP sender, which offers no window scale, resent a 165-B remainder of a segment that had
    # straddled that edge (README, "Why an XP sender sent one short segment to a Linux receiver").
    assert set(sizes) == {1448 if ts else 1460}


@needs_core
@pytest.mark.parametrize("shared", [True, False])
def test_windows_xp_receive_limit_is_shared_by_the_flows_to_one_host(shared):
    """The XP receive limit is a capacity of the host, not of a connection: two CUBIC flows to one
    XP client share it (together at most the capacity), two flows to two XP clients get it each.
    (The same 1 Gbit/s path as above; goodput after 8 s.)"""
    cap = stacks.get("windows-xp").knob_values()["rx_capacity"]
    flow = {"cca": "cubic", "sender_stack": "generic", "receiver_stack": "windows-xp",
            "window": "16MiB"}  # fmt: skip
    doc: dict[str, Any] = {
        "duration": "20s",
        "path": {"rate": "1Gbit", "rtt": "20ms", "queue": "10000pkt"},
        "flow": [{"name": "a", **flow}, {"name": "b", **flow}],
    }
    if shared:
        doc["host"] = [{"name": "client", "side": "right"}]
        for f in doc["flow"]:
            f["dst"] = "client"
    res = simulate(doc)
    ser = res["series"]
    late = [
        g for t, g in zip(ser["time_ns"], ser["goodput_bps"], strict=True) if t > 8 * S
    ]  # samples of both flows, interleaved: the mean of their sum is twice the mean sample
    total = 2 * sum(late) / len(late)
    ceiling = cap * 1460 / 1500
    rx = [ln for ln in res["links"] if ln["dir"] == "rx"]
    assert len(rx) == (1 if shared else 2)  # one receive stage per receiving host
    if shared:
        assert 0.8 * ceiling <= total <= ceiling * 1.001, total
    else:
        assert 1.6 * ceiling <= total <= 2 * ceiling * 1.001, total


def _dupack_timing(pk: Packets) -> tuple[list[int], list[int], list[int]]:
    """At the receiver host (*pk* captured there: data arriving, ACKs leaving), for each ACK
    number: how long after the latest data arrival each of the first three ACKs sent while
    out-of-order data waited (ACK number below the highest sequence received) left, and for the
    ones after them the same delay and the gap to the previous ACK (ns). Linux counts these per
    rcv_nxt (tcp_input.c __tcp_ack_snd_check, dup_ack_counter reset when compressed_ack_rcv_nxt
    differs): the first can be the ACK that a segment beyond a hole triggers while the previous
    in-order segment's ACK was still delayed, so it carries a new ACK number."""
    isn = pk.rows[0][3]
    early, late_delay, late_gap = [], [], []
    run, prev, arrived, high = 0, None, None, None
    for p in pk.rows:
        if p[1] == pk.sport:
            if p[8] > 0:
                arrived = p[0]
                end = (p[3] - isn + p[8]) % 2**32
                high = end if high is None else max(high, end)
            continue
        ack = (p[4] - isn) % 2**32
        if ack <= 1:
            continue  # handshake
        if prev is None or p[4] != prev[4]:
            run = 0
        if p[8] == 0 and high is not None and ack < high:
            run += 1
            if run <= 3:
                early.append(p[0] - arrived)
            else:
                late_delay.append(p[0] - arrived)
                late_gap.append(p[0] - prev[0])
        prev = p
    return early, late_delay, late_gap


@needs_core
@pytest.mark.parametrize("compress", [True, False])
def test_linux_6_receiver_compresses_sacks_after_three_duplicate_acks(compress):
    """Linux 4.18+ (ip-sysctl tcp_comp_sack_nr / tcp_comp_sack_delay_ns): while out-of-order data
    waits, the first three duplicate ACKs for one rcv_nxt leave at once and further ones at most
    every min(1 ms, RTT/20) — 1 ms on this 40-ms path, on the compression timer; segments arrive
    0.12 ms apart at 100 Mbit/s while the path is full, so without compression every one of them
    is answered at once. Seen at the receiver host, where "at once" is the arrival's instant."""
    doc = {
        "duration": "10s",
        "stack": "linux-6",
        "path": {"rate": "100Mbit", "rtt": "40ms", "loss": "1%", "queue": "400pkt"},
        "flow": [{"name": "f", "cca": "cubic", "tcp": {"isn": 0},
                  "receiver_tcp": {} if compress else {"comp_sack_nr": 0}}],
    }  # fmt: skip
    res = simulate(doc, ["host:f.rcv"])
    early, late_delay, late_gap = _dupack_timing(Packets(res["packets"]))
    assert len(early) > 50 and late_gap, (len(early), len(late_gap))
    # The capture stamps an arriving segment when its first bit arrives: an ACK sent as the
    # segment arrived leaves one segment time later (1 500 B at 100 Mbit/s: 120 µs).
    at_once = statistics.mode(early)
    assert at_once <= 120_000
    assert sum(d == at_once for d in early) >= 0.9 * len(early)  # the first three: at once
    if compress:
        assert min(late_gap) >= 1_000_000 - 1_000, min(late_gap)
        assert sorted(late_delay)[len(late_delay) // 2] > 500_000  # on the timer
    else:
        assert all(d == at_once for d in late_delay)
        assert sorted(late_gap)[len(late_gap) // 2] < 500_000


# ---------------------------------------------------------------------------- Windows 7


def _round_spans(pk: Packets, rtt: int, rounds: int) -> list[float]:
    """For each of the first *rounds* rounds after the first ACK: how much of the RTT the sender
    spent sending that round's segments (last − first send time, / RTT)."""
    start = pk.data_acks()[0][0]
    out = []
    for r in range(rounds):
        ts = [p[0] for p in pk.data() if start + r * rtt <= p[0] < start + (r + 1) * rtt]
        out.append((max(ts) - min(ts)) / rtt if len(ts) > 1 else 0.0)
    return out


@needs_core
@pytest.mark.parametrize("pacing", [True, False])
def test_windows_7_paces_its_window_across_the_rtt(pacing):
    """Z: Windows 7 spreads a window over the RTT, Linux sends it at the start of the round
    (Zhou & Yan). 100 Mbit/s, 100 ms: in slow start a round's segments leave within a few ms
    unless paced."""
    doc = {
        "duration": "1s",
        "interval": "100ms",
        "stack": "windows-7",
        "path": {"rate": "100Mbit", "rtt": "100ms"},
        "flow": [{"name": "f", "cca": "newreno", "window": "4MiB",
                  "tcp": {"isn": 0, "pacing": pacing}}],
    }  # fmt: skip
    pk = Packets(simulate(doc, ["host:f.snd"])["packets"])
    spans = _round_spans(pk, 100 * MS, 3)[1:]  # rounds 2 and 3 (4 and 8 segments)
    if pacing:
        assert all(s > 0.5 for s in spans), spans
    else:
        assert all(s < 0.05 for s in spans), spans


@needs_core
def test_windows_7_grows_cwnd_one_segment_per_rtt_linux_one_per_two_or_three():
    """Z1 at 25 ms: in congestion avoidance with delayed ACKs Windows 7 (bytes, byte counting)
    adds about one segment per RTT, Linux 2.6.39 (packets, no ABC) one per 2–3 RTTs."""

    def growth(stack: str) -> float:
        doc = {
            "duration": "3s",
            "interval": "25ms",
            "stack": stack,
            "path": {"rate": "1Gbit", "rtt": "25ms", "queue": "10000pkt"},
            "flow": [{"name": "f", "cca": "reno", "window": "16MiB",
                      "tcp": {"initial_ssthresh": "14480B",
                              # delayed ACKs throughout: a Linux 2.x receiver ACKs every
                              # segment while its window grows (quickack_on_growth), here
                              # for the whole run (16 MiB), where Linux grows ~1 per RTT
                              "quickack_on_growth": False}}],
        }  # fmt: skip
        ser = simulate(doc)["series"]
        cw = dict(zip(ser["time_ns"], ser["cwnd_segments"], strict=True))
        return (cw[2_500_000_000] - cw[500_000_000]) / 80  # segments per RTT over 80 RTTs

    assert 0.8 <= growth("windows-7") <= 1.2
    assert 1 / 3 <= growth("linux-2.6.39") <= 0.6


# ============================================================================ timers per stack


def _timeouts(stack: str, lost: list[int]) -> tuple[list[float], list[float]]:
    """Drop the forward packets numbered *lost* on the J1 path and return the SYN send times
    and the times at which the first retransmitted segment was sent (original first), in s."""
    doc = j1_doc(stack, tcp={"isn": 0})
    doc["duration"] = "60s"
    doc["path"]["loss"] = {"model": "list", "packets": lost}
    pk = Packets(simulate(doc, ["host:f.snd"], 60)["packets"])
    syns = [p[0] / 1e9 for p in pk.rows if p[1] == pk.sport and p[5] & 0x02]
    sends: dict[int, list[float]] = {}
    for p in pk.data():
        sends.setdefault(p[3], []).append(p[0] / 1e9)
    resent = [s for s in sends.values() if len(s) > 1]
    return syns, (resent[0] if resent else [])


TIMER_TICK = {"freebsd-5.3": 0.010, "freebsd-5.2.1": 0.010, "openbsd-3.5": 0.5}


@needs_core
@pytest.mark.parametrize(
    "stack", ["freebsd-5.3", "freebsd-5.2.1", "openbsd-3.5", "linux-2.4.27", "windows-xp"]
)
def test_rto_backoff_during_a_blackout_follows_the_stack_timer(stack):
    """Packets 40–79 of the flow are lost (a blackout of the forward path): after the first
    timeout every retry waits twice as long (RFC 6298 §5.5; BSD tcp_backoff[] doubles up to
    ×64, FreeBSD 5.2.1's to ×512; FreeBSD restarts the doubling from a smaller estimate after
    the fourth timeout), BSD stacks' timeouts are whole timer ticks (10 ms hz ticks on
    FreeBSD, 500 ms slow-timer ticks on OpenBSD), OpenBSD's is at least its 1 s minimum and
    FreeBSD's carries
    the 200 ms slop above the path's 200 ms RTT. FreeBSD adds the slop once to the backed-off
    estimate (tcp_timer_rexmt: TCPT_RANGESET(TCP_REXMTVAL * tcp_backoff[shift]) = value +
    tcp_rexmit_slop), so there the part above the slop doubles (until 2026-11-28 the model
    doubled the slop too, and this test asserted it)."""
    k = knobs_of(stack)
    slop = k.get("rto_slop", 0) / 1e9
    _, sends = _timeouts(stack, list(range(40, 80)))
    gaps = [b - a for a, b in itertools.pairwise(sends)]
    assert len(gaps) >= 4, f"{stack}: retransmissions at {sends}"
    backoff = gaps[1:]  # the first gap starts at the original send, not at the timer's start
    # FreeBSD 5.2.1 tcp_timer_rexmt (rtt_forget_into_rttvar): after the fourth timeout's
    # interval, t_srtt moves into t_rttvar (>> 5) and TCP_REXMTVAL shrinks to t_rttvar >> 2, so
    # the doubling restarts from a smaller base at the fifth; each run doubles within itself.
    forget = k.get("rtt_forget_after_backoffs", 0) if k.get("rtt_forget_into_rttvar") else 0
    runs = [backoff[:forget], backoff[forget:]] if forget else [backoff]
    for run in runs:
        for a, b in itertools.pairwise(run):
            assert b - slop == pytest.approx(2 * (a - slop), abs=2e-6), f"{stack}: gaps {gaps}"
    if forget and len(backoff) > forget:
        assert backoff[forget] - slop < 2 * (backoff[forget - 1] - slop) - 1e-6, f"{gaps}"
    tick = TIMER_TICK.get(stack)
    if tick:
        for g in backoff:
            assert round(g / tick) * tick == pytest.approx(g, abs=2e-6), f"{stack}: {g} s"
    base = (backoff[0] - slop) / 2 + slop
    assert base >= k["min_rto"] / 1e9 - 1e-6
    if k["rto_slop"]:
        assert base >= 0.2 + k["rto_slop"] / 1e9, f"{stack}: base RTO {base} s"


@needs_core
@pytest.mark.parametrize(
    ("stack", "cap"), [("openbsd-3.5", 64), ("macos", 64), ("linux-2.4.27", 0)]
)
def test_rto_backoff_cap_in_a_long_blackout(stack, cap):
    """A blackout of one segment for 300 s: each timeout waits the first backed-off interval
    times 2, 4, … until the multiplier's cap (knob rto_backoff_max_multiplier: 64 in OpenBSD
    3.5's and XNU's tcp_backoff[], none on Linux) or max_rto (TCPTV_REXMTMAX 64 s on both BSDs,
    Linux's TCP_RTO_MAX 120 s), whichever comes first. OpenBSD drops SRTT after the fourth
    timeout without changing the interval (TCP_RTT_SHIFT 3: knob rtt_forget_into_rttvar off),
    so there the series is unbroken too; XNU moves t_srtt >> 5 into t_rttvar (knob on), so from
    the fifth timeout on macos multiplies a smaller estimate, with the same cap. Before
    2026-11-29 macos doubled on to its 60-s default maximum."""
    k = knobs_of(stack)
    forget = k.get("rtt_forget_after_backoffs", 0) if k.get("rtt_forget_into_rttvar") else 0
    assert bool(forget) == (stack == "macos")
    doc = j1_doc(stack, tcp={"isn": 0})
    doc["duration"] = "300s"
    doc["path"]["loss"] = {"model": "list", "packets": list(range(40, 2000))}
    pk = Packets(simulate(doc, ["host:f.snd"], 300)["packets"])
    sends: dict[int, list[float]] = {}
    for p in pk.data():
        sends.setdefault(p[3], []).append(p[0] / 1e9)
    resent = next(s for s in sends.values() if len(s) > 1)
    backoff = [b - a for a, b in itertools.pairwise(resent)][1:]
    assert len(backoff) >= 6, f"{stack}: retransmissions at {resent}"
    slop = k.get("rto_slop", 0) / 1e9
    cap = cap or 2**30
    max_rto = k["max_rto"] / 1e9
    # backoff[i] is the estimate times 2 ** (i + 1) (plus the slop); with the forgetting the
    # estimate changes at backoff[forget] (the fifth timeout's interval).
    est = (backoff[0] - slop) / 2
    for i, g in enumerate(backoff):
        if forget and i == forget:
            est = (g - slop) / 2 ** (i + 1)
            assert est < (backoff[0] - slop) / 2, f"{stack}: the estimate did not shrink"
        want = min(est * min(2 ** (i + 1), cap) + slop, max_rto)
        assert g == pytest.approx(want, abs=2e-6), f"{stack}: timeout {i + 2}, gaps {backoff}"
    if cap <= 64:  # the series reached its ceiling and stayed there
        assert backoff[-1] == pytest.approx(min(max_rto, est * cap + slop), abs=2e-6)
        assert backoff[-2] == pytest.approx(backoff[-1], abs=2e-6)
    else:  # no cap: the doubling went on past 64 times the estimate
        assert max(backoff) > est * 64, f"{stack}: gaps {backoff}"


def _first_timeout_after_last_ack(stack: str, lost: list[int], floor: int | None) -> float:
    """The J1 path with the forward packets *lost*: seconds from the last ACK that reached the
    sender before the first retransmission (the retransmission timer restarts on it, RFC 6298
    §5.3) to that retransmission. *floor*: override of `rto_floor_ticks`."""
    tcp: dict[str, Any] = {"isn": 0}
    if floor is not None:
        tcp["rto_floor_ticks"] = floor
    doc = j1_doc(stack, tcp=tcp)
    doc["duration"] = "30s"
    doc["path"]["loss"] = {"model": "list", "packets": lost}
    pk = Packets(simulate(doc, ["host:f.snd"], 60)["packets"])
    seen: set[int] = set()
    first = None
    for p in pk.data():
        if p[3] in seen:
            first = p[0]
            break
        seen.add(p[3])
    assert first is not None, f"{stack}: no retransmission"
    last_ack = max(a[0] for a in pk.data_acks() if a[0] < first)
    return (first - last_ack) / 1e9


@needs_core
def test_openbsd_rto_at_least_two_ticks_above_the_last_sample():
    """OpenBSD's tcp_xmit_timer floors the RTO at the last RTT sample plus two 500-ms ticks
    (`max(rtt + 2, t_rttmin)`): on the J1 path (200 ms plus queueing, samples of 0-2 ticks) the
    first timeout after a blackout waits whole ticks and, for some blackouts, longer than the
    1 s t_rttmin that bounds it without the floor; never shorter."""
    starts = [40, 55, 70, 85, 100]
    with_floor = [_first_timeout_after_last_ack("openbsd-3.5", list(range(s, s + 40)), None)
                  for s in starts]  # fmt: skip
    without = [_first_timeout_after_last_ack("openbsd-3.5", list(range(s, s + 40)), 0)
               for s in starts]  # fmt: skip
    for g in with_floor + without:
        assert round(g / 0.5) * 0.5 == pytest.approx(g, abs=0.011), (with_floor, without)
    assert all(f >= n - 1e-6 for f, n in zip(with_floor, without, strict=True))
    assert any(f >= n + 0.5 - 1e-6 for f, n in zip(with_floor, without, strict=True)), (
        with_floor,
        without,
    )


@needs_core
@pytest.mark.parametrize(
    "stack", ["freebsd-5.3", "openbsd-3.5", "linux-2.4.27", "linux-6", "windows-xp", "windows-7"]
)
def test_syn_retransmissions_at_the_initial_rto_then_doubled(stack):
    """The SYN and its first retry are lost: retries leave after the initial RTO (3 s on the
    2004-era stacks, 6 s on OpenBSD, 1 s on Linux ≥ 3.1, RFC 6298 §2.1) and then twice that —
    except that recent Linux waits the initial RTO again for its first `tcp_syn_linear_timeouts` (4)
    retries (ip-sysctl.rst; measured on the kernel by scripts/linux-6/syn-linear-timeouts.pkt),
    and so does FreeBSD (tcp_syn_backoff[] = {1, 1, 1, 1, 1, 2, …}), whose re-armed timer also
    carries its 200 ms tcp_rexmit_slop."""
    k = knobs_of(stack)
    rto = k["initial_rto"] / 1e9
    syns, _ = _timeouts(stack, [0, 1])
    assert len(syns) == 3, syns
    assert syns[1] - syns[0] == pytest.approx(rto, abs=1e-6)
    second = (rto if k["syn_linear_timeouts"] >= 1 else 2 * rto) + k["rto_slop"] / 1e9
    assert syns[2] - syns[1] == pytest.approx(second, abs=1e-6)


def _syns_when_all_lost(stack: str, seconds: int) -> list[float]:
    """Send times (s) of the SYNs of a J1 flow whose first 40 forward packets are lost, over
    *seconds*; checks that no data was sent (the connection never opened)."""
    doc = j1_doc(stack)
    doc["duration"] = f"{seconds}s"
    doc["path"]["loss"] = {"model": "list", "packets": list(range(40))}
    rows = simulate(doc, ["host:f.snd"], seconds)["packets"]
    sport = rows[0][1]
    assert all(p[8] == 0 for p in rows), f"{stack}: data sent without a connection"
    return [p[0] / 1e9 for p in rows if p[1] == sport and p[5] & 0x02]


@needs_core
@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        # tcp_syn_backoff × 3 s + 200 ms slop after the first SYN; keep-init at 75 s.
        ("freebsd-5.3", [0, 3, 6.2, 9.4, 12.6, 15.8, 22.0, 34.2, 58.4]),
        ("freebsd-5.2.1", [0, 3, 6.2, 9.4, 12.6, 15.8, 22.0, 34.2, 58.4]),
        # tcp_backoff[] from TCP_REXMTVAL of a new tcpcb (6 s: tcp_newtcpcb's t_rttvar, see
        # openbsd-3.5.toml initial_rto; until 2026-11-29 an assumed 3 s), no slop; keep-init at
        # 75 s.
        ("openbsd-3.5", [0, 6, 18, 42]),
        # XNU: tcp_syn_backoff × 1 s; keep-init at 75 s.
        ("macos", [0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67]),
    ],
)
def test_bsd_connect_attempt_ends_at_the_keepinit_timer(stack, expected):
    """Every SYN is lost for 120 s: a BSD-derived stack sends its SYNs on its own schedule and
    abandons the attempt 75 s after the first (TCPTV_KEEP_INIT, tcp_timer_keep), long before its
    12 retries (TCP_MAXRXTSHIFT) are used up; no data is ever sent."""
    syns = _syns_when_all_lost(stack, 120)
    assert syns == pytest.approx(expected, abs=1e-6), f"{stack}: SYNs at {syns}"


@needs_core
@pytest.mark.parametrize("stack", ["windows-xp", "windows-vista", "windows-7", "linux-2.6.25"])
def test_connect_gives_up_after_the_stacks_syn_retries(stack):
    """Every SYN is lost: Windows sends the SYN and TcpMaxConnectRetransmissions = 2 retries
    (at 0, 3 and 9 s: TcpInitialRtt 3 s, doubled) and then abandons the attempt (Microsoft's
    registry reference); Linux 2.6 keeps retrying (tcp_syn_retries 5 by default, the engine's
    6 here) with the delay doubling, so within 60 s it sends more SYNs and no data either way."""
    k = knobs_of(stack)
    syns = _syns_when_all_lost(stack, 60)
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(syns)]
    rto = k["initial_rto"] / 1e9
    assert gaps == [rto * 2**i for i in range(len(gaps))], f"{stack}: SYNs at {syns}"
    if stack.startswith("windows"):
        assert syns == pytest.approx([0.0, 3.0, 9.0], abs=1e-6), syns
    else:
        assert len(syns) > 3, syns


@needs_core
@pytest.mark.parametrize(
    "stack", ["windows-xp", "windows-vista", "windows-7", "windows-server-2008", "linux-2.6.25"]
)
def test_windows_aborts_after_five_unanswered_data_retransmissions(stack):
    """The forward path goes dark at packet 40 for good: Windows retransmits the segment at
    snd_una TcpMaxDataRetransmissions = 5 times, each timeout twice the last, and aborts the
    connection at the next expiry (Microsoft KB 170359; knob max_data_retransmissions): no
    sixth retransmission follows. Linux has no such count (tcp_retries2 is a time budget of
    ~15 minutes) and keeps retransmitting for the whole minute."""
    _, sends = _timeouts(stack, list(range(40, 2000)))
    gaps = [b - a for a, b in itertools.pairwise(sends)]
    if stack.startswith("windows"):
        assert len(sends) == 1 + 5, f"{stack}: sent at {sends}"
        # the first timer ran from an earlier segment's send; each expiry after it doubles
        doubled = [b == pytest.approx(2 * a, rel=1e-6) for a, b in itertools.pairwise(gaps[1:])]
        assert all(doubled), gaps
    else:
        assert len(sends) > 1 + 5, f"{stack}: sent at {sends}"


def _blackout(stack: str, lost: range = range(40, 80)):
    """The J1 path with the forward packets *lost* lost (a blackout), one NewReno flow of
    *stack*, its changes recorded: the run's result."""
    doc = j1_doc(stack)
    doc.update(duration="20s", record_changes=True)
    doc["flow"][0]["cca"] = "newreno"
    # The receiver ACKs every second segment from the start: a Linux 2.x receiver's ACK per
    # growing segment (`quickack_on_growth`, since 2026-11-29; no effect on the other stacks)
    # lets linux-2.6.39's window run far enough ahead by packet 40 that SACK repairs the
    # blackout without a timeout (measured: 0 timeouts, 41 retransmissions), which is not what
    # these tests are about.
    tcp = doc["flow"][0].setdefault("tcp", {})
    tcp.update(quickack_on_growth=False, quickack_window_sized=False)
    doc["path"]["loss"] = {"model": "list", "packets": list(lost)}
    return tcplab.run(doc, trials=1)


def _ssthresh_at_timeouts(
    stack: str, lost: range = range(40, 80)
) -> tuple[list[tuple[int, int]], int]:
    """The J1 path with forward packets 40–79 (or *lost*) lost (a blackout): per retransmission
    timeout (cwnd falls to one segment), the (cwnd before it, ssthresh after it) in bytes; and
    the MSS."""
    ch = _blackout(stack, lost).changes
    rows = list(zip(ch.cwnd_bytes.astype(int), ch.ssthresh_bytes, strict=True))
    mss = int(min(c for c, _ in rows))
    # A timeout is a change to the loss window, or (cwnd already there) a change of ssthresh; a
    # retry that changes neither leaves no row of its own.
    out = [
        (int(before), int(s))
        for (before, s_before), (c, s) in itertools.pairwise(rows)
        if c == mss and (before != mss or s != s_before)
    ]
    return out, mss


@needs_core
@pytest.mark.parametrize("stack", ["freebsd-5.3", "freebsd-5.2.1", "openbsd-3.5"])
def test_bsd_timeouts_halve_the_smaller_window_and_recompute_each_time(stack):
    """4.4BSD tcp_timer.c (FreeBSD 5, OpenBSD 3.5): on each expiry ssthresh = max(min(snd_wnd,
    snd_cwnd) / 2 / t_maxseg, 2) segments — from the smaller of cwnd and the peer's window
    (OpenBSD's 16 KB window is the smaller one here), truncated to whole segments; the second
    timeout starts from the 1-segment loss window, so ssthresh falls to 2 segments."""
    events, mss = _ssthresh_at_timeouts(stack)
    assert len(events) >= 2, f"{stack}: {events}"
    (cwnd, first), (_, second) = events[:2]
    rwnd = knobs_of(stack)["rcvbuf"]
    assert first == max(min(cwnd, rwnd) // 2 // mss, 2) * mss, f"{stack}: {events}, rwnd {rwnd}"
    assert second == 2 * mss, f"{stack}: {events}"


@needs_core
@pytest.mark.parametrize(
    "stack",
    [
        "generic",
        "linux-2.4.27",
        "linux-2.6.10",
        "linux-2.6.39",
        "windows-xp",
        "windows-vista",
        "windows-7",
    ],
)
def test_rfc_stacks_hold_ssthresh_on_repeated_timeouts(stack):
    """RFC 5681 §3.1 (Linux tcp_enter_loss; Windows assumed to follow the RFC, no source says
    otherwise): only the first timeout of a series sets ssthresh; the retries of the blackout
    keep it. (linux-6 repairs this blackout without a timeout, macOS with one.)"""
    events, mss = _ssthresh_at_timeouts(stack)
    assert len(events) == 1, f"{stack}: {events}"
    assert events[0][1] > 2 * mss


@needs_core
def test_macos_sets_ssthresh_from_the_smaller_window_on_the_first_timeout_only():
    """XNU since OS X 10.9 (tcp_timer.c calls the algorithm's after_timeout only when
    t_rxtshift == 1; tcp_newreno.c): the first timeout of a series sets ssthresh = max(min(snd_wnd,
    snd_cwnd) / 2 / t_maxseg, 2) segments and the retries of a longer blackout hold it (where
    4.4BSD, FreeBSD 5 and OpenBSD recompute it down to 2 segments)."""
    lost = range(40, 400)  # nothing gets through for the 20 s: retries at 1, 2, 4, 8 s ...
    events, mss = _ssthresh_at_timeouts("macos", lost)
    timeouts = _blackout("macos", lost).summary["flows"]["f"]["timeouts"]["mean"]
    assert timeouts >= 3, timeouts
    # one change at the first timeout; the retries leave cwnd at one segment and ssthresh alone
    assert len(events) == 1, events
    cwnd, first = events[0]
    rwnd = knobs_of("macos")["rcvbuf"]
    assert first == max(min(cwnd, rwnd) // 2 // mss, 2) * mss > 2 * mss, (events, rwnd)


@needs_core
def test_solaris_halves_ssthresh_again_on_each_backed_off_timeout():
    """OpenSolaris tcp_timer: ssthresh = max(((backoff ? ssthresh : snxt − suna) >> 1) / mss, 2)
    segments — the first timeout halves the data outstanding, each retry of the blackout halves
    ssthresh again, down to 2 segments."""
    events, mss = _ssthresh_at_timeouts("solaris-10")
    assert len(events) >= 3, events
    first = events[0][1]
    assert first % mss == 0 and first > 4 * mss, events
    expected = [first]
    while expected[-1] > 2 * mss:
        expected.append(max(expected[-1] // 2 // mss, 2) * mss)
    assert [s for _, s in events] == expected[: len(events)], events
