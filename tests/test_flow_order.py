"""The engine has no preference for a flow's position in the scenario (issue #15, I5).

Two flows that share a bottleneck and start at the same nanosecond are simulated with the flows
listed in one order and in the other. Nothing about a flow may depend on its index (event
tie-breaking, endpoint order, per-flow random streams): each flow, found by its name, must get
exactly the same result both ways. The flows differ on purpose (a Windows Vista client with its
receive limit, a Linux 2.6.29 client) so that a bias could show, and the buffer is small so that
both flows lose packets at the shared queue, where tie-breaking between them would matter.

Checked for I5 at full size (2026-11-26, 300 s, CTCP, Vista/Linux 2.6.29, equal starts and the
study's start jitter): swapping the flows mirrored every per-flow number exactly.

**Positional until 2026-11-27, fixed since.** Events at the same nanosecond and of the same
class used to pop in the order they were scheduled, and that order followed the flows'
positions: both flows' first packets tie at t = 0, so with the flows swapped the Vista flow's
first ACK returned at 40.109 ms instead of 40.097 ms and every later time differed (with Linux
2.6's CUBIC increment rule the Linux flow delivered 27 994 184 bytes in one order and 27 992 736
in the other). Simultaneous events of different entities now pop in the order of a rank hashed
from the entity's name (src/event.rs, docs/design.md §2), so swapping the flows mirrors every
per-flow number exactly again. (Between the two, the totals had already mirrored again by
chance: the BIC/CUBIC delayed-ACK estimate sampling only ACKs in Linux's Open state,
`AckEvent::outside_open`, removed the microsecond's effect on this run.)
"""

from __future__ import annotations

from typing import Any

import tcplab
from conftest import needs_core

FLOW_FIELDS = ("bytes_delivered", "retransmits", "fast_retransmits", "timeouts", "dupacks")


def two_flows(order: tuple[int, int]) -> dict[str, Any]:
    flows = [
        {
            "name": "vista",
            "sender_stack": "linux-2.6.25",
            "receiver_stack": "windows-vista",
            "cca": "cubic",
        },
        {
            "name": "linux",
            "sender_stack": "linux-2.6.25",
            "receiver_stack": "linux-2.6.29",
            "cca": "cubic",
        },
    ]
    return {
        "name": "order",
        "duration": "8s",
        "interval": "1s",
        "seed": 3,
        "path": {"rate": "1Gbit", "rtt": "20ms", "queue": "32pkt"},
        "tcp": {"tso": True, "timestamps": True, "sack": True, "window_scaling": True},
        "flow": [flows[i] for i in order],
    }


def per_flow(order: tuple[int, int]) -> dict[str, tuple[Any, ...]]:
    raw = tcplab.run(two_flows(order)).raw[0]
    return {f["name"]: tuple(f[k] for k in FLOW_FIELDS) for f in raw["flows"]}


@needs_core
def test_swapping_flow_order_mirrors_results_exactly() -> None:
    a = per_flow((0, 1))
    b = per_flow((1, 0))
    assert a == b
    # Not vacuous: both flows moved data and both lost packets at the shared queue.
    for name in ("vista", "linux"):
        assert a[name][0] > 0
        assert a[name][1] > 0
    # The flows are really different (otherwise any order would trivially agree).
    assert a["vista"] != a["linux"]
