"""End-host knobs of the simulator that the kernel engine cannot honour (issue #15 §3): NIC
receive interrupt coalescing (``rx_coalesce``) and late host timers (``timer_slack``).

Why, exactly:

* the kernel engine's hosts are network namespaces joined by veth pairs. A veth has no NIC and
  no receive interrupt: a packet sent on one end is handed to the peer's receive path in the
  sender's context (a software queue), so there is nothing for ``ethtool -C rx-usecs`` to
  throttle, and the machine's real NIC is not on the path. Any ``rx_coalesce`` would be ignored
  silently, so it is refused;
* the TCP timers of the running kernel (delayed ACK, RTO, TLP, pacing) are the kernel's own;
  nothing from a namespace makes them fire later by a chosen amount (timer slack,
  prctl(2) PR_SET_TIMERSLACK, applies to a user thread's sleeps, not to TCP's timers).
"""

from __future__ import annotations

#: knob -> why the kernel engine refuses a non-zero value
KERNEL_REFUSALS = {
    "rx_coalesce": (
        "the kernel engine's hosts are joined by veth pairs, which have no NIC and no receive "
        "interrupt to coalesce (ethtool -C does not apply; python/tcplab/kernel/hosts.py)"
    ),
    "timer_slack": (
        "the running kernel's TCP timers cannot be made to fire late from a namespace (timer "
        "slack applies to user threads' sleeps only; python/tcplab/kernel/hosts.py)"
    ),
}
