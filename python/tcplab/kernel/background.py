"""Background traffic (``[[background]]``, tcplab.scenario.background) on the kernel engine: not
run; the validator refuses it with :data:`KERNEL_REFUSAL`.

Why, exactly (state of this tree):

* the link emulator (:mod:`.linkem`, crates/tcplab-linkem) applies a link's loss model only to
  the packets of the scenario's flows, which it recognises by the iperf3 client/server port
  pairs the engine hands it (``loss_only``, ``watch`` and ``count`` in
  ``KernelRun._emulator_config``). Background connections use ephemeral ports chosen by the
  kernel at connect time, so the emulator would neither lose nor count them the way the
  simulator does (where ``path.loss`` applies to every packet of the direction): the two engines
  would model different paths. Matching them needs a port-range classifier in the emulator's
  config, which is being reworked in another branch;
* nothing in this tree starts short connections at given times in a namespace; a client that
  does (Poisson arrival times and bounded-Pareto sizes drawn from the trial seed as the
  simulator draws them) and a sink that counts completions are straightforward, but they have
  not been written or measured here, in particular not whether a Python client can keep
  hundreds of arrivals per second (S1 offers ≈ 250/s) on the 2 cores the userspace emulator
  already shares with iperf3 without making the emulator's self-check fail.
"""

from __future__ import annotations

KERNEL_REFUSAL = (
    "background traffic is not supported by the kernel engine: its link emulator applies loss "
    "only to the scenario's flows (recognised by their iperf3 ports), and no short-connection "
    "client exists yet (python/tcplab/kernel/background.py says exactly why)"
)
