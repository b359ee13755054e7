"""`tcplab compare --replay`: its refusals (no root needed). The replay itself, which needs a
recorded kernel run, is tested in test_kernel_root.py (`test_compare_reno_sim_vs_kernel`)."""

from __future__ import annotations

import gzip
import json

import pytest

from tcplab.cli import main
from tcplab.kernel.compare import KERNEL_RECORD


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["compare"], "give a SCENARIO to run on both engines, or --replay DIR"),
        (["compare", "x.toml", "--replay", "d"], "(not both)"),
        (["compare", "--replay", "d", "--seed", "3"], "--seed cannot be used"),
        (["compare", "--replay", "d", "--trials", "2"], "--trials cannot be used"),
    ],
)
def test_compare_needs_exactly_one_source(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_replay_names_a_directory_without_a_record(tmp_path, capsys):
    assert main(["compare", "--replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"compare --replay {tmp_path}: no {KERNEL_RECORD} there" in err


def test_replay_refuses_another_layout_and_writes_nothing(tmp_path, capsys):
    with gzip.open(tmp_path / KERNEL_RECORD, "wt") as fh:
        json.dump({"version": 0}, fh)
    out = tmp_path / "again"
    assert main(["compare", "--replay", str(tmp_path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "has layout version 0, this tcplab reads version 1" in err
    assert not out.exists()


def test_replay_of_a_damaged_record_is_an_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / KERNEL_RECORD).write_bytes(b"not gzip")
    assert main(["compare", "--replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot read {tmp_path / KERNEL_RECORD}" in err and "Traceback" not in err
