"""From a normalized config (docs/design.md §3) to namespaces, veth links, addresses and routes.

Layout of one run (``X`` = the run id)::

    tl-X-0-snd0            tl-X-em (link emulator)             tl-X-1-r1
    [ l0 ]--veth--[ l0a ]  ==AF_PACKET bridge, ab/ba impairments==  [ l0b ]--veth--[ l0 ]

* one namespace per node (hosts and routers), plus one emulator namespace;
* every link is two veth pairs meeting in the emulator namespace, which bridges ``l<i>a`` and
  ``l<i>b`` at layer 2 through src/serve.rs of crates/tcplab-linkem, applying the link's ``ab``
  impairments to frames entering at ``l<i>a`` and ``ba`` to frames entering at ``l<i>b``;
* link ``i`` gets the private subnet ``10.<1 + i // 256>.<i % 256>.0/24`` (side a ``.1``, side b
  ``.2``); these addresses exist only inside the run's namespaces;
* routes are shortest-hop with ties to the link declared first, computed exactly as the simulator
  does (crates/tcplab-sim/src/net.rs ``compute_routes``), installed as /32 routes to every address
  of every other node; neighbours are static (no ARP through the emulator).

:func:`plan` is pure (unit-tested without root); :func:`build` executes a plan.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .netns import RunNamespaces, run_cmd

__all__ = ["LinkPlan", "Plan", "build", "plan"]

# Every offload that makes the kernel hand over frames larger than the MTU, or frames whose
# checksum is left to hardware (a packet socket would forward them unfinished).
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", "sg", "off")


@dataclass
class LinkPlan:
    index: int
    name: str
    a: str
    b: str
    mtu: int
    monitor: bool
    ab: dict[str, Any]
    ba: dict[str, Any]
    subnet: str
    a_addr: str
    b_addr: str
    a_mac: str
    b_mac: str

    @property
    def node_if(self) -> str:
        """Interface name on both node ends (unique within each node's namespace)."""
        return f"l{self.index}"

    @property
    def em_a(self) -> str:
        return f"l{self.index}a"

    @property
    def em_b(self) -> str:
        return f"l{self.index}b"


@dataclass
class Route:
    dst: str  # address/32
    via: str
    dev: str


@dataclass
class Plan:
    nodes: list[str]
    kinds: dict[str, str]
    links: list[LinkPlan]
    #: next hop per (from node, to node): (link index, direction "ab"/"ba")
    next_hop: dict[tuple[str, str], tuple[int, str]]
    routes: dict[str, list[Route]] = field(default_factory=dict)

    def addr_of(self, node: str) -> str:
        """A node's primary address (on its first link)."""
        for link in self.links:
            if link.a == node:
                return link.a_addr
            if link.b == node:
                return link.b_addr
        raise KeyError(node)

    def first_hop(self, src: str, dst: str) -> tuple[int, str]:
        return self.next_hop[(src, dst)]

    def path(self, src: str, dst: str) -> list[tuple[int, str]]:
        """Link directions from *src* to *dst*."""
        hops = []
        node = src
        while node != dst:
            li, d = self.next_hop[(node, dst)]
            hops.append((li, d))
            link = self.links[li]
            node = link.b if d == "ab" else link.a
            if len(hops) > len(self.links):
                raise ValueError(f"routing loop from {src} to {dst}")
        return hops


def _mac(i: int, side: int) -> str:
    return f"02:74:6c:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}:{side:02x}"


def plan(config: dict[str, Any]) -> Plan:
    """Addresses, MACs and routes for *config*; raises ValueError on an unusable topology."""
    nodes = [n["name"] for n in config["nodes"]]
    kinds = {n["name"]: n.get("kind", "host") for n in config["nodes"]}
    if len(set(nodes)) != len(nodes):
        raise ValueError("duplicate node names")
    if len(config["links"]) > 250 * 256:
        raise ValueError("too many links for the 10.0.0.0/8 address plan")
    links: list[LinkPlan] = []
    for i, link in enumerate(config["links"]):
        for end in ("a", "b"):
            if link[end] not in kinds:
                raise ValueError(f"links[{i}].{end}: unknown node {link[end]!r}")
        net = ipaddress.ip_network(f"10.{1 + i // 256}.{i % 256}.0/24")
        links.append(
            LinkPlan(
                index=i,
                name=link["name"],
                a=link["a"],
                b=link["b"],
                mtu=int(link.get("mtu", 1500)),
                monitor=bool(link.get("monitor", False)),
                ab=link["ab"],
                ba=link["ba"],
                subnet=str(net),
                a_addr=str(net.network_address + 1),
                b_addr=str(net.network_address + 2),
                a_mac=_mac(i, 1),
                b_mac=_mac(i, 2),
            )
        )
    # Channels in the simulator's order: link 0 ab, link 0 ba, link 1 ab, ...
    channels: list[tuple[str, str, int, str]] = []
    for lk in links:
        channels.append((lk.a, lk.b, lk.index, "ab"))
        channels.append((lk.b, lk.a, lk.index, "ba"))
    next_hop: dict[tuple[str, str], tuple[int, str]] = {}
    for dst in nodes:
        dist = {dst: 0}
        frontier = deque([dst])
        while frontier:
            v = frontier.popleft()
            for frm, to, li, d in channels:
                if to == v and frm not in dist:
                    dist[frm] = dist[v] + 1
                    next_hop[(frm, dst)] = (li, d)
                    frontier.append(frm)
    p = Plan(nodes=nodes, kinds=kinds, links=links, next_hop=next_hop)
    for u in nodes:
        routes: list[Route] = []
        for v in nodes:
            if v == u or (u, v) not in next_hop:
                continue
            li, d = next_hop[(u, v)]
            lk = links[li]
            via = lk.b_addr if d == "ab" else lk.a_addr
            for other in links:
                for end, addr in ((other.a, other.a_addr), (other.b, other.b_addr)):
                    if end != v or addr == via:
                        continue
                    if other.index == li:
                        continue  # on the link to the next hop itself: directly connected
                    routes.append(Route(f"{addr}/32", via, lk.node_if))
        p.routes[u] = routes
    return p


def ns_suffix(index: int, name: str) -> str:
    safe = "".join(c if c.isalnum() else "_" for c in name)[:20]
    return f"{index}-{safe}"


def build(p: Plan, ns: RunNamespaces, *, node_sysctls: dict[str, dict[str, str]]) -> dict:
    """Create the namespaces, links, addresses, neighbours and routes of *p*.

    Returns ``{"nodes": {node: namespace}, "em": emulator namespace}``.
    """
    em = ns.create("em")
    node_ns = {n: ns.create(ns_suffix(i, n)) for i, n in enumerate(p.nodes)}
    for n, name in node_ns.items():
        base = {
            # Forward on every node, as the simulator routes through any node.
            "net.ipv4.ip_forward": "1",
            "net.ipv4.conf.all.rp_filter": "0",
            "net.ipv4.conf.default.rp_filter": "0",
            "net.ipv4.conf.all.send_redirects": "0",
            "net.ipv4.conf.default.send_redirects": "0",
            # Each connection starts fresh, as in the simulator (no cached ssthresh/RTT).
            "net.ipv4.tcp_no_metrics_save": "1",
            # Ephemeral ports (iperf3's control connections) below the fixed data-connection
            # ports (engine.CLIENT_PORT0 = 40000 + flow index), so they never collide.
            "net.ipv4.ip_local_port_range": "20000 29999",
            # New namespaces inherit this host's default congestion control (bbr here). A socket
            # created under BBR keeps BBR's request for internal pacing after iperf3 switches it
            # to reno or cubic (measured: slow start paced at 2·cwnd/srtt, see README), so the
            # namespace default is reno, which never paces and which a namespace may always
            # choose (cubic may not be: only the host's allowed list can be a namespace default).
            "net.ipv4.tcp_congestion_control": "reno",
        }
        base.update(node_sysctls.get(n, {}))
        ns.sysctl(name, base)
    for lk in p.links:
        a_ns, b_ns = node_ns[lk.a], node_ns[lk.b]
        for node_ns_name, mac, em_if in ((a_ns, lk.a_mac, lk.em_a), (b_ns, lk.b_mac, lk.em_b)):
            run_cmd(
                [
                    "ip",
                    "-n",
                    node_ns_name,
                    "link",
                    "add",
                    lk.node_if,
                    "address",
                    mac,
                    "mtu",
                    str(lk.mtu),
                    "type",
                    "veth",
                    "peer",
                    "name",
                    em_if,
                    "mtu",
                    str(lk.mtu),
                    "netns",
                    em,
                ]
            )
        run_cmd(["ip", "-n", a_ns, "addr", "add", f"{lk.a_addr}/24", "dev", lk.node_if])
        run_cmd(["ip", "-n", b_ns, "addr", "add", f"{lk.b_addr}/24", "dev", lk.node_if])
        run_cmd(
            [
                "ip",
                "-n",
                a_ns,
                "neigh",
                "replace",
                lk.b_addr,
                "lladdr",
                lk.b_mac,
                "dev",
                lk.node_if,
                "nud",
                "permanent",
            ]
        )
        run_cmd(
            [
                "ip",
                "-n",
                b_ns,
                "neigh",
                "replace",
                lk.a_addr,
                "lladdr",
                lk.a_mac,
                "dev",
                lk.node_if,
                "nud",
                "permanent",
            ]
        )
        for ns_name, ifname in (
            (a_ns, lk.node_if),
            (b_ns, lk.node_if),
            (em, lk.em_a),
            (em, lk.em_b),
        ):
            run_cmd(["ip", "netns", "exec", ns_name, "ethtool", "-K", ifname, *OFFLOADS_OFF])
            run_cmd(["ip", "-n", ns_name, "link", "set", ifname, "up"])
    for n, routes in p.routes.items():
        for r in routes:
            run_cmd(["ip", "-n", node_ns[n], "route", "replace", r.dst, "via", r.via, "dev", r.dev])
    return {"nodes": node_ns, "em": em}


def check_offloads(ns_name: str, ifname: str) -> list[str]:
    """Offloads still on for *ifname* (should be none): names from ``ethtool -k``."""
    out = run_cmd(["ip", "netns", "exec", ns_name, "ethtool", "-k", ifname])
    bad = []
    for line in out.splitlines():
        key, _, val = line.strip().partition(":")
        if key in (
            "tcp-segmentation-offload",
            "generic-segmentation-offload",
            "generic-receive-offload",
            "tx-checksumming",
        ) and val.strip().startswith("on"):
            bad.append(key)
    return bad
