"""Property-based fuzzing of the input parsers: whatever a user writes, the result is a valid
value or a UserError with a message — never another exception, never a half-validated scenario.

Hypothesis drives random unit strings, random TOML documents built from the scenario's own keys
(plus junk) and random --set overrides through the real parsers.
"""

from __future__ import annotations

import math

import pytest

hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tcplab import units  # noqa: E402
from tcplab.errors import UserError  # noqa: E402

UNITS = [
    "",
    "bit",
    "kbit",
    "Mbit",
    "Gbit",
    "bps",
    "Mbps",
    "ms",
    "s",
    "us",
    "ns",
    "min",
    "B",
    "KB",
    "MB",
    "MiB",
    "GiB",
    "pkt",
    "%",
    "M",
    "b",
    "m",
    "xyz",
]

unit_text = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda n, u, sp: f"{n}{' ' if sp else ''}{u}",
        st.one_of(
            st.integers(-(10**12), 10**12),
            st.floats(allow_nan=True, allow_infinity=True),
            st.decimals(allow_nan=False, allow_infinity=False, places=3),
        ),
        st.sampled_from(UNITS),
        st.booleans(),
    ),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)

PARSERS = [
    units.parse_rate,
    units.parse_duration,
    units.parse_bytes,
    units.parse_packets,
    units.parse_probability,
    units.parse_queue,
]


@settings(max_examples=400, deadline=None)
@given(value=unit_text, parser=st.sampled_from(PARSERS))
def test_unit_parsers_return_values_or_user_errors(value, parser):
    try:
        out = parser(value)
    except UserError as e:
        assert str(e)  # a message for the user
        return
    if isinstance(out, (int, float)):
        assert not (isinstance(out, float) and math.isnan(out))
        assert out >= 0


scalar = st.one_of(
    st.integers(-5, 10**10),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.sampled_from(
        [
            "100Mbit",
            "50ms",
            "bdp",
            "64pkt",
            "1%",
            "cubic",
            "reno",
            "udp",
            "tcp",
            "forward",
            "reverse",
            "16MiB",
            "0s",
            "10s",
            "",
            "zzz",
        ]
    ),
)
path_keys = st.sampled_from(
    ["rate", "rtt", "delay", "queue", "mtu", "loss", "access_rate", "access_delay", "bogus"]
)
flow_keys = st.sampled_from(
    [
        "name",
        "kind",
        "cca",
        "start",
        "stop",
        "bytes",
        "streams",
        "window",
        "rtt",
        "rate",
        "direction",
        "nonsense",
    ]
)
top_keys = st.sampled_from(["name", "seed", "duration", "interval", "trials", "engine", "oops"])

documents = st.fixed_dictionaries(
    {
        "path": st.dictionaries(path_keys, scalar, max_size=5),
        "flow": st.lists(st.dictionaries(flow_keys, scalar, max_size=6), max_size=3),
    },
    optional={"top": st.dictionaries(top_keys, scalar, max_size=4)},
)


@settings(max_examples=300, deadline=None)
@given(doc=documents)
def test_scenario_loader_accepts_or_explains(doc):
    from tcplab import scenario

    top = doc.pop("top", {})
    doc.update(top)
    try:
        sc = scenario.load(doc, file="fuzz.toml")
    except UserError as e:
        msg = str(e)
        assert msg.startswith("fuzz.toml"), msg
        return
    # A scenario that loads expands to a config the engine accepts.
    cfg = sc.config(1)
    assert cfg["flows"] and cfg["links"] and cfg["nodes"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40))
def test_override_parser_never_crashes(text):
    from tcplab import scenario

    doc = {"path": {"rate": "10Mbit"}, "flow": [{"cca": "reno"}]}
    try:
        scenario.load(doc, overrides=[text], file="fuzz.toml")
    except UserError as e:
        assert str(e)
