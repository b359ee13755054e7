"""Zhou & Yan, "Experimental Evaluation of TCP Implementations on Linux/Windows Platforms"
(Communication University of China, ~2012).

Experiments Z1–Z3 (seed-experiments.md): Windows 7 and Linux 2.6.39 senders in Beijing, PlanetLab
receivers at RTT 25–470 ms over the Internet (modelled as a bottleneck plus random loss).
Scenarios in ``scenarios/studies/zhou2012/``.
"""

from .core import Study

STUDY = Study(
    name="zhou2012",
    title="Zhou & Yan 2012: TCP implementations on Linux and Windows",
    citation=(
        'Zhou, Yan, "Experimental Evaluation of TCP Implementations on Linux/Windows '
        'Platforms", Communication University of China, ~2012.'
    ),
    testbed=(
        "Two senders in Beijing, Windows 7 (6.1.7600) and Linux 2.6.39.4, standard TCP "
        "(Reno/NewReno), SACK on, MTU 1500; PlanetLab (Linux) receivers at RTT 25, 205, 267, "
        "389, 470 ms over the Internet; cwnd from TCP_INFO / IP Helper; ≥ 5 repetitions."
    ),
    ids=("Z1", "Z2", "Z3"),
)
