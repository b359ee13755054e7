"""Bundled scenarios (tcplab.bundled): run and list by name from any directory; TOML writing by
tomli-w (the resolved scenario and sweep points' ``--set`` values)."""

from __future__ import annotations

import math
import subprocess
import sys
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from tcplab import bundled
from tcplab.cli import main
from tcplab.errors import UserError
from tcplab.sweep import _toml_literal


def test_bundled_dir_is_inside_the_package_and_the_repo_link_points_at_it():
    d = bundled.scenarios_dir()
    assert d.parent.name == "tcplab" and (d / "quickstart.toml").is_file()
    assert (ROOT / "scenarios").resolve() == d


def test_names_cover_top_level_and_study_scenarios():
    names = bundled.names()
    assert names[0] == "fairness" and "quickstart" in names
    assert "studies/jansen2005/J3" in names
    assert all(not n.endswith(".toml") for n in names)


@pytest.mark.parametrize("arg", ["quickstart", "quickstart.toml", "scenarios/quickstart"])
def test_resolve_by_name(arg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./scenarios here
    assert bundled.resolve(arg) == str(bundled.scenarios_dir() / "quickstart.toml")


def test_an_existing_file_wins_over_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quickstart").write_text("x")
    assert bundled.resolve("quickstart") == "quickstart"


def test_unknown_name_is_a_clear_error_with_a_suggestion(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as e:
        bundled.resolve("J3")
    msg = str(e.value)
    assert msg.startswith("J3: no such scenario file")
    assert "'studies/jansen2005/J3'" in msg and "tcplab list scenarios" in msg
    with pytest.raises(UserError):
        bundled.resolve("../quickstart")  # names never escape the bundled directory


def test_list_scenarios(capsys):
    assert main(["list", "scenarios"]) == 0
    out = capsys.readouterr().out
    assert "quickstart" in out and "One CUBIC flow" in out and "studies/zhou2012/" in out


def test_run_and_reproduce_list_from_another_directory(tmp_path):
    """The installed command, in a directory with no scenarios/ (the packaging bug of #13)."""
    out = tmp_path / "q"
    cmd = [sys.executable, "-m", "tcplab", "run", "quickstart", "--quiet"]
    cmd += ["--set", "duration=2s", "--out", str(out)]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    assert (out / "summary.json").is_file()
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "reproduce", "list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "jansen2005" in r.stdout


_scalars = (
    st.text(max_size=20)
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats()
    | st.booleans()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


@given(_values)
def test_sweep_set_literal_roundtrips(value):
    text = _toml_literal(value)
    assert "\n" not in text  # one --set item is one line
    assert _same(value, tomllib.loads(f"v = {text}")["v"])
