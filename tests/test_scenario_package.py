"""The scenario package's parts (tcplab.scenario.*): the one file reader shared with sweeps, the
engine catalog from tcplab.engines (validation never imports the kernel package), the personality
rule of a set window, and flow validation's steps in their documented order."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FAKE_CATALOG, ROOT, needs_core
from tcplab import ScenarioError, engines, stacks, sweep
from tcplab.catalog import Catalog, Cca
from tcplab.scenario import load, read_document
from tcplab.stacks import rules


def test_sweep_reads_files_with_the_scenario_reader(tmp_path):
    assert sweep.read_document is read_document
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    for read in (lambda: read_document(bad), lambda: load(bad, catalog=FAKE_CATALOG)):
        with pytest.raises(ScenarioError) as e:
            read()
        assert str(e.value).startswith(f"{bad}: not valid TOML")
    doc = {"path": {"rate": "1Mbit"}}
    got, name = read_document(doc)
    assert got == doc and got is not doc and name == "<scenario>"
    assert read_document(doc, "x.toml")[1] == "x.toml"


def test_kernel_ccas_are_added_without_replacing_the_simulators():
    base = Catalog(knobs={}, ccas={"cubic": Cca("cubic", summary="sim's")})
    cat = engines.with_kernel_ccas(base, ["reno", "cubic", "bbr"])
    assert list(cat.ccas) == ["cubic", "reno", "bbr"]
    assert cat.ccas["cubic"].summary == "sim's"
    assert "kernel engine only" in cat.ccas["bbr"].summary and not cat.ccas["bbr"].params
    assert list(base.ccas) == ["cubic"]  # the base catalog is not changed


@needs_core
def test_validating_a_kernel_scenario_does_not_import_the_kernel_package():
    code = (
        "import sys, tcplab.scenario as s\n"
        "s.load({'engine': 'kernel', 'path': {'rate': '10Mbit'}, 'flow': [{'cca': 'reno'}]})\n"
        "print(sorted(m for m in sys.modules if m.startswith('tcplab.kernel')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert out.strip() == "[]"


@needs_core
def test_a_set_window_turns_receive_autotuning_off():
    lx = stacks.get("linux-6")
    own = lx.knob_values()
    assert own["rcvbuf_autotune_max"] is not None
    fixed = rules.host_knobs(lx, {"rcvbuf": 65536, "sndbuf": 65536}, window_set=True)
    assert fixed["rcvbuf_autotune_max"] is None and fixed["rcvbuf"] == 65536
    free = rules.host_knobs(lx, {}, window_set=False)
    assert free == own
    # The scenario's knobs still win: an explicit autotuning limit stays.
    explicit = rules.host_knobs(lx, {"rcvbuf_autotune_max": 1 << 20}, window_set=True)
    assert explicit["rcvbuf_autotune_max"] == 1 << 20


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        # Two bad fields: the one of the earlier step (name < endpoints < timing < rtt < tcp)
        # is reported.
        ({"name": "1x", "src": "nope"}, "flow.0.name"),
        ({"src": "nope", "start": "99s"}, "flow.0.src"),
        ({"start": "99s", "rtt": "1ms"}, "flow.0.start"),
        ({"rtt": "1ms", "cca": "nope"}, "flow.0.rtt"),
        ({"cca": "nope"}, "flow.0.cca"),
    ],
)
def test_flow_steps_report_the_first_bad_field(flow, field):
    doc = {"duration": "10s", "path": {"rate": "10Mbit", "rtt": "50ms"}, "flow": [flow]}
    with pytest.raises(ScenarioError) as e:
        load(doc, catalog=FAKE_CATALOG, file="s.toml")
    assert str(e.value).startswith(f"s.toml: {field}"), str(e.value)


@needs_core
def test_stack_cca_text_is_toml_written_by_the_one_writer():
    import tomllib

    from tcplab.scenario import parse_override_value

    st = stacks.get("linux-2.6.10")
    name, _, table = st.default_cca_text().partition(" ")
    assert name == "bic" and tomllib.loads(f"v = {table}")["v"] == st.params_for("bic")
    tricky = 'say "hi"\\'
    assert parse_override_value(stacks._toml_value(tricky)) == tricky


@pytest.mark.parametrize(
    ("loss", "text"),
    [
        ("0.5%", "loss bernoulli p=0.005"),
        ({"model": "list", "packets": [5, 3, 5]}, "loss list of 2 packet indexes"),
        ({"model": "gilbert-elliott", "p_gb": 0.01, "p_bg": 0.5}, "p_gb=0.01 p_bg=0.5"),
    ],
)
def test_topology_text_shows_every_loss_model(loss, text):
    doc = {"path": {"rate": "10Mbit", "loss": loss}, "flow": [{"cca": "reno"}]}
    assert text in load(doc, catalog=FAKE_CATALOG).topology_text()
