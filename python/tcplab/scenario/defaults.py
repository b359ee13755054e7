"""Keys, defaults and limits of the scenario format (docs/scenario-format.md)."""

from __future__ import annotations

import re

from .. import stacks as stacks_mod

TOP_KEYS = (
    "name",
    "description",
    "seed",
    "duration",
    "interval",
    "trials",
    "engine",
    "record_changes",
    "capture",
    "path",
    "stack",
    "tcp",
    "host",
    "flow",
    "background",
    "sweep",
    "report",
    "assume",
    "run",
)
RUN_KEYS = ("executor", "ray_address")
PATH_KEYS = (
    "rate",
    "rtt",
    "delay",
    "queue",
    "mtu",
    "loss",
    "access_rate",
    "access_delay",
    "host_queue",
    "reverse",
    "schedule",
    "jitter",
    "tick",
)
REVERSE_KEYS = ("rate", "queue", "loss", "jitter", "tick")
HOST_KEYS = ("name", "side", "nic_rate", "ring", "access_rate", "access_delay")
FLOW_COMMON_KEYS = (
    "name",
    "kind",
    "direction",
    "src",
    "dst",
    "start",
    "start_jitter",
    "stop",
    "rtt",
)
FLOW_TCP_KEYS = (
    *FLOW_COMMON_KEYS,
    "bytes",
    "app",
    "app_delay",
    "streams",
    "window",
    "sender_stack",
    "receiver_stack",
    "cca",
    "tcp",
    "receiver_tcp",
)
FLOW_UDP_KEYS = (*FLOW_COMMON_KEYS, "rate", "payload")
LOSS_MODELS = ("none", "bernoulli", "gilbert-elliott", "list")
ENGINES = ("sim", "kernel")
SIDES = ("left", "right")
DIRECTIONS = ("forward", "reverse")
ROUTERS = ("r1", "r2")  # r1 on the left, r2 on the right

DEFAULT_DURATION = "10s"
DEFAULT_INTERVAL = "1s"
DEFAULT_RTT = "100ms"
DEFAULT_QUEUE = "bdp"
DEFAULT_MTU = 1500
DEFAULT_ACCESS_DELAY = "0.1ms"
DEFAULT_HOST_QUEUE = "1000pkt"
DEFAULT_PAYLOAD = "1470B"
DEFAULT_CCA = "cubic"
#: The stack of every TCP flow's hosts unless `stack`, `sender_stack` or `receiver_stack` say
#: otherwise: the engine's knob defaults (python/tcplab/stacks/generic.toml).
DEFAULT_STACK = stacks_mod.GENERIC
ACCESS_RATE_FACTOR = 10
#: IPv4 (20 B) + UDP (8 B) headers: a UDP payload must fit the MTU with them (no fragmentation).
UDP_IP_HEADERS = 28
#: IPv4 minimum datagram size every host must accept (RFC 791) .. IPv4 maximum.
MTU_RANGE = (576, 65535)
#: Series rows per flow above which a scenario is refused (duration / interval).
MAX_SAMPLES = 10_000_000

NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
NAME_RULE = "a name starting with a letter, then letters, digits, '_' or '-' (no dots)"
SCENARIO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
