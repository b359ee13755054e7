"""Kumazoe, Tsuru, Oie, "Performance of high-speed transport protocols coexisting on a long
distance 10-Gbps testbed network" (GridNets 2007).

Experiments K1–K5 (seed-experiments.md) on the JGN II 10 Gbit/s network: Kitakyushu → Chicago
(180 ms) and → Tokyo (18 ms), Linux 2.6.16 senders limited to about 5.4 Gbit/s each, jumbo
frames. Scenarios in ``scenarios/studies/kumazoe2007/``.
"""

from .core import Study

STUDY = Study(
    name="kumazoe2007",
    title="Kumazoe et al. 2007: high-speed transport protocols on a 10 Gbit/s testbed",
    citation=(
        'K. Kumazoe, M. Tsuru, Y. Oie, "Performance of high-speed transport protocols '
        'coexisting on a long distance 10-Gbps testbed network", GridNets 2007.'
    ),
    testbed=(
        "JGN II 10 Gbit/s: Kitakyushu → Chicago (RTT 180 ms) and Kitakyushu → Tokyo (18 ms). "
        "Senders Linux 2.6.16 (Reno, HSTCP, Scalable, H-TCP, CUBIC, Compound patch), receivers "
        "Linux; MTU 9000, txqueuelen 10000, SACK and timestamps on; a single sender peaks at "
        "about 5.4 Gbit/s (host bus/NIC); socket buffers 100 MB (L) or 40 MB (S); iperf 1-s "
        "goodput."
    ),
    ids=("K1", "K2", "K3", "K4", "K5"),
)
