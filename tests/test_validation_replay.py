"""The kernel validation set's single-flow rows, replayed against recorded kernel runs.

tests/data/kernel-records/<scenario>/kernel-trials.json.gz are the kernel trials of the rows A
and B of `python -m tcplab.kernel.validate` (this project's 2-core VM, Linux 6.18; date and
numbers in the README, "The real-kernel engine"), kept so that every test run judges the
simulator against the same real-kernel runs without root (`tcplab compare --replay`). A change
of the model that makes one of these rows fail fails here: either the change is wrong, or it is
right and the README says why the row now fails. Re-record with
`python -m tcplab.kernel.validate --only a- --out DIR` (root) and copy DIR/<scenario>/
kernel-trials.json.gz here, stating why in the commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab.kernel.compare import KERNEL_RECORD, replay

RECORDS = Path(__file__).resolve().parent / "data" / "kernel-records"
ROWS = sorted(p.name for p in RECORDS.iterdir() if (p / KERNEL_RECORD).is_file())


def test_the_records_are_there():
    assert {r[:2] for r in ROWS} == {"a-", "b-"} and len(ROWS) == 6, ROWS


@pytest.mark.parametrize("row", ROWS)
def test_recorded_validation_row_still_passes(row):
    rep = replay(RECORDS / row)
    assert rep["kernel_valid"], rep["kernel_invalid_reasons"]
    fails = {
        f["flow"]: {k: c["value"] for k, c in f["checks"].items() if c["pass"] is False}
        for f in rep["flows"]
    }
    assert rep["pass"], fails
