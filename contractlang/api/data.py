"""`cl.data`: the data the package ships, reached through the package wherever it is installed, never by a
path into the source tree."""

from __future__ import annotations

from pathlib import Path


def synthetic_set() -> Path:
    """The folder of the shipped synthetic ContractSim set (ContractSim paper, App. C.4): the 180 contracts, their
    manifest and the finished jobs. Read-only input: the experiments read it when given no directory and write
    into `out`."""
    from games.experiments.synth import SHIPPED

    return SHIPPED
