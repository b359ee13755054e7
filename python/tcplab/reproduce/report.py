"""Writing the reproduction report: CSV tables, comparison CSVs, figures and HTML pages.

Layout of ``<out>``::

    index.html                  every study: agreement summary, links
    summary.csv, summary.md     agreement per study (the README table), timings
    <study>/index.html          every experiment: our tables in the paper's layout, the published
                                numbers next to ours with differences and orderings, the checked
                                observations, the figures, notes on disagreements
    <study>/<ID>[-suffix].csv   our tables (one row per stack / algorithm / case)
    <study>/compare/<ID>[-suffix].csv   published vs ours, one row per cell
    <study>/checks.csv          published observations and whether ours show them
    <study>/sweeps/<file>.csv   per sweep point: goodput of every flow group, Jain's index
    <study>/figures/*.png
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import core

__all__ = ["table_file", "write_index", "write_study"]


def table_file(exp_id: str, suffix: str) -> str:
    return f"{exp_id}-{suffix}.csv" if suffix else f"{exp_id}.csv"


def _num(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "–"
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3g}"
        if abs(x) >= 100:
            return f"{x:.1f}"
        if abs(x) >= 1:
            return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}"
        return f"{x:.4f}"
    return html.escape(str(x))


def _e(s: Any) -> str:
    return html.escape(str(s))


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th { background: #f0f0f0; } td.k, th.k { text-align: left; }
td.ok { background: #e3f4e1; } td.bad { background: #fbe0dc; } td.na { color: #999; }
td.fit { background: #e4ecf7; } td.inp { background: #eeeeee; }
.role { font-size: 0.75em; color: #555; white-space: nowrap; }
.note { background: #fff8e0; border-left: 4px solid #e0b000; padding: 0.5em 1em; }
.err { background: #fbe0dc; border-left: 4px solid #c00; padding: 0.5em 1em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; }
code { background: #f4f4f4; padding: 0 3px; }
"""


def _page(title: str, body: str) -> str:
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


def _df_html(df: pd.DataFrame, keys: Sequence[str]) -> str:
    head = "".join(f"<th class='k'>{_e(c)}</th>" if c in keys else f"<th>{_e(c)}</th>" for c in df)
    rows = []
    for _, r in df.iterrows():
        cells = "".join(
            f"<td class='k'>{_e(r[c])}</td>" if c in keys else f"<td>{_num(r[c])}</td>"
            for c in df.columns
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _pivot_html(df: pd.DataFrame, keys: Sequence[str], pivot: str, values: Sequence[str]) -> str:
    """The paper's layout: *pivot* key as columns, cells the value columns joined by ' / '."""
    rows_keys = [k for k in keys if k != pivot]
    cols = list(dict.fromkeys(df[pivot].astype(str)))
    head = "".join(f"<th class='k'>{_e(k)}</th>" for k in rows_keys)
    head += "".join(f"<th>{_e(pivot)} = {_e(c)}</th>" for c in cols)
    out = []
    for rk, sub in df.groupby(rows_keys, sort=False) if rows_keys else [((), df)]:
        rk = rk if isinstance(rk, tuple) else (rk,)
        cells = "".join(f"<td class='k'>{_e(x)}</td>" for x in rk)
        for c in cols:
            m = sub[sub[pivot].astype(str) == c]
            if m.empty:
                cells += "<td class='na'>–</td>"
            else:
                cells += "<td>" + " / ".join(_num(m.iloc[0][v]) for v in values) + "</td>"
        out.append(f"<tr>{cells}</tr>")
    legend = f"<p>cells: {' / '.join(_e(v) for v in values)}</p>" if len(values) > 1 else ""
    return legend + f"<table><tr>{head}</tr>{''.join(out)}</table>"


ROLE_TEXT = {
    "independent": "independent (nothing was chosen by looking at it: counts as agreement)",
    "fitted": "fitted (a knob was chosen to match it: shown, never counted as agreement)",
    "input": "input (restates a configured value: a sanity check, not agreement)",
}


def _role_html(role: str, knob: Sequence[str] = (), inp: str = "") -> str:
    extra = ""
    if role == "fitted" and knob:
        extra = f": {', '.join(knob)}"
    elif role == "input" and inp:
        extra = f": {inp}"
    return f"<span class='role'>{_e(role)}{_e(extra)}</span>"


def _cls(role: str, agree: Any) -> str:
    """A cell's colour: green/red only for independent results."""
    if agree is None or (isinstance(agree, float) and math.isnan(agree)):
        return "na"
    if role == "fitted":
        return "fit"
    if role == "input":
        return "inp"
    return "ok" if agree else "bad"


def _comparison_html(c: core.tables_mod.Comparison) -> str:
    cols = list(dict.fromkeys(c.cells["column"]))
    keys = c.keys
    head = "".join(f"<th class='k'>{_e(k)}</th>" for k in keys)
    for col in cols:
        head += f"<th>{_e(col)}<br>paper</th><th>ours</th><th>Δ (Δ%)</th>"
    rows = []
    for kv, sub in c.cells.groupby(keys, sort=False):
        kv = kv if isinstance(kv, tuple) else (kv,)
        cells = "".join(f"<td class='k'>{_e(x)}</td>" for x in kv)
        for col in cols:
            m = sub[sub["column"] == col]
            if m.empty:
                cells += "<td class='na' colspan=3>–</td>"
                continue
            r = m.iloc[0]
            cls = _cls(c.role, r["agree"])
            rel = "" if pd.isna(r["rel_diff"]) else f" ({100 * r['rel_diff']:+.0f}%)"
            tag = "" if c.role == "independent" else "<br>" + _role_html(c.role)
            cells += (
                f"<td>{_num(r['published'])}</td><td class='{cls}'>{_num(r['ours'])}{tag}</td>"
                f"<td class='{cls}'>{_num(r['diff'])}{rel}</td>"
            )
        rows.append(f"<tr>{cells}</tr>")
    a, n = c.cells_agree
    tols = [f"±{100 * c.tolerance:.0f}% of the published value"]
    tols += [f"±{v:g} absolute for {_e(k)}" for k, v in c.abs_tolerance.items()]
    if c.role == "independent":
        verdict = f"<b>{a} of {n}</b> (green; red = outside)"
    else:
        verdict = f"{a} of {n} — <b>not counted as agreement</b>"
    mirrored = (
        f" {c.mirrored_rows} published row(s) that mirror another exactly are compared once."
        if c.mirrored_rows
        else ""
    )
    out = [
        f"<p>Role: <b>{_e(ROLE_TEXT[c.role])}</b>"
        + (f"; fitted knob(s): <code>{_e(', '.join(c.knob))}</code>" if c.knob else "")
        + "</p>",
        f"<p>Published: {_e(c.source)}. Cells within {'; '.join(tols)}: {verdict}.{mirrored}</p>",
        f"<table><tr>{head}</tr>{''.join(rows)}</table>",
    ]
    if c.orders:
        items = []
        for o in c.orders:
            where = f" ({_e(o.within)} = {_e(o.group)})" if o.within else ""
            mark = "agrees" if o.agree else "differs"
            items.append(
                f"<li>ranking by {_e(o.column)}{where}: paper {_e(' > '.join(o.published))}; "
                f"ours {_e(' > '.join(o.ours))} — <b>{mark}</b> (Kendall τ = {o.tau:.2f})</li>"
            )
        out.append(
            f"<p>Orderings (which does better; role {_role_html(c.order_role)}):</p><ul>"
            + "".join(items)
            + "</ul>"
        )
    if c.pairs:
        scored = [p for p in c.pairs if p.agree is not None]
        agree = sum(bool(p.agree) for p in scored)
        bad = [p for p in scored if not p.agree]
        skipped = [p for p in c.pairs if p.agree is None]
        txt = (
            f"<p>Within each row (role {_role_html(c.pairs_role)}), the larger of "
            f"{_e(c.pairs[0].a)} and {_e(c.pairs[0].b)}: "
            f"same as the paper in <b>{agree} of {len(scored)}</b> scored rows"
        )
        if bad:
            txt += "; differs in " + ", ".join(
                f"{_e(p.row)} (paper: {_e(p.published)}, ours: {_e(p.ours)}"
                + (f"; {_e(p.why)}" if p.why else "")
                + ")"
                for p in bad
            )
        if skipped:
            txt += ". Not scored: " + ", ".join(f"{_e(p.row)} ({_e(p.why)})" for p in skipped)
        out.append(txt + ".</p>")
    if c.note:
        out.append(f"<p class='note'>{_e(c.note)}</p>")
    return "\n".join(out)


def _checks_html(checks: Sequence[core.tables_mod.CheckResult]) -> str:
    rows = []
    for ch in checks:
        cls = _cls(ch.role, ch.passed)
        verdict = (
            "not evaluated"
            if ch.passed is None
            else ("holds" if ch.passed else "does not hold")
            + {"fitted": " (fitted: not agreement)", "input": " (sanity check)"}.get(ch.role, "")
        )
        note = f"<br><i>{_e(ch.note)}</i>" if ch.note else ""
        rows.append(
            f"<tr><td class='k'>{_e(ch.claim)}{note}</td>"
            f"<td class='k'>{_role_html(ch.role, ch.knob, ch.input)}</td>"
            f"<td class='{cls}'>{verdict}</td><td class='k'>{_e(ch.detail)}</td></tr>"
        )
    return (
        "<table><tr><th class='k'>published observation</th><th class='k'>role</th><th>ours</th>"
        f"<th class='k'>detail</th></tr>{''.join(rows)}</table>"
    )


def _fitted_html(fitted: Sequence[dict[str, Any]]) -> str:
    items = []
    for f in fitted:
        how = f" ({_e(f['how'])})" if f.get("how") else ""
        items.append(
            f"<li><code>{_e(f['knob'])}</code> = <code>{_e(f['value'])}</code>, fitted to "
            f"{_e(f['fitted_to'])}{how}</li>"
        )
    return (
        "<p><b>Fitted knobs</b> (chosen by looking at published results; what they were fitted to "
        "is not counted as agreement):</p><ul>" + "".join(items) + "</ul>"
    )


def _envelope_html(env: Any, rows: Sequence[dict[str, Any]], checks: Sequence[dict]) -> str:
    """The assumptions of one experiment and, per published cell, the envelope of our values."""
    items = "".join(
        f"<li><b>{_e(a.name)}</b> (<code>{_e(', '.join(a.fields))}</code>): {_e(a.value)} "
        f"assumed, plausible {_e(a.low)} – {_e(a.high)}. {_e(a.why)}"
        + (f" <i>Source: {_e(a.source)}</i>" if a.source else "")
        + (f" <b>FITTED</b> to {_e(a.fitted)}." if a.fitted else "")
        + "</li>"
        for a in env.assumptions
    )
    labels = ", ".join(v.label for v in env.variants)
    head = (
        f"<h3>Assumption envelope ({len(env.variants)} variants: {_e(labels)})</h3><ul>{items}</ul>"
    )
    if rows:
        df = pd.DataFrame(rows).drop(columns=["experiment"])
        head += df.to_html(index=False, na_rep="–", float_format=lambda x: f"{x:.4g}")
    if checks:
        head += pd.DataFrame(checks).drop(columns=["experiment"]).to_html(index=False)
    return head


def _envelope_counts(
    rows: Sequence[dict[str, Any]], checks: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """Per role: cells reachable within their envelope, and observations (checks) that hold in
    the scenario as it is, in at least one variant (``somewhere``) or in none."""
    out: dict[str, Any] = {}
    for role in ("independent", "fitted", "input"):
        rs = [r for r in rows if r["role"] == role and r["reachable"] is not None]
        cs = [c for c in checks if c["role"] == role and c["holds"] is not None]
        somewhere = sum(1 for c in cs if bool(c["holds"]) or int(c["holds_in_variants"]) > 0)
        out[role] = {
            "cells": len(rs),
            "agree": sum(1 for r in rs if bool(r["agree"])),
            "reachable": sum(1 for r in rs if r["reachable"]),
            "outside": sum(1 for r in rs if not r["reachable"]),
            "observations": len(cs),
            "observations_hold": sum(1 for c in cs if bool(c["holds"])),
            "observations_hold_somewhere": somewhere,
            "observations_hold_nowhere": len(cs) - somewhere,
        }
    return out


def write_study(
    d: Path,
    study: core.Study,
    outcomes: Sequence[core.Outcome],
    quick: bool,
    envelopes: Sequence[tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]] = (),
) -> dict[str, Any]:
    """Write ``<study>/`` (CSV tables, comparisons, checks, HTML) into *d*; figures are already
    in ``d/figures``. Returns the study's agreement summary. *envelopes*: per experiment with
    assumptions, (Envelope, cell rows, check rows) from :mod:`tcplab.reproduce.envelope`."""
    env_by_id = {env.base.id: (env, rows, checks) for env, rows, checks in envelopes}
    (d / "compare").mkdir(parents=True, exist_ok=True)
    (d / "sweeps").mkdir(exist_ok=True)
    check_rows = []
    parts = [
        f"<p><a href='../index.html'>all studies</a></p><h1>{_e(study.title)}</h1>",
        f"<p>{_e(study.citation)}</p><p><b>Testbed.</b> {_e(study.testbed)}</p>",
    ]
    if study.notes:
        parts.append(f"<p class='note'>{_e(study.notes)}</p>")
    if quick:
        parts.append(
            "<p class='err'>Quick mode: fewer trials and shorter runs than the paper's "
            "(see each scenario's [report.quick]); numbers are indicative only.</p>"
        )
    for o in outcomes:
        e = o.experiment
        rep = e.report
        sweeps = o.sweep.table()
        stem = e.file.stem
        sweeps.to_csv(d / "sweeps" / f"{stem}.csv", index=False)
        n_pts = len(o.sweep.points)
        parts.append(f"<h2 id='{_e(stem)}'>{_e(rep.id)} — {_e(rep.title)}</h2>")
        parts.append(
            f"<p>{_e(e.description)}</p><p>Scenario <code>{_e(e.file.name)}</code>: {n_pts} "
            f"case(s), {o.trials} trial(s) in all ({o.sim_seconds:.0f} s of simulation); every "
            "unpublished parameter is stated there with the value chosen and why.</p>"
        )
        for err in o.errors:
            parts.append(f"<p class='err'>{_e(err)}</p>")
        if rep.fitted:
            parts.append(_fitted_html(rep.fitted))
        for t in rep.tables:
            df = o.tables.get(t["suffix"])
            if df is None:
                continue
            fname = table_file(rep.id, t["suffix"])
            df.to_csv(d / fname, index=False)
            title = t.get("title") or (f"{rep.id} {t['suffix']}" if t["suffix"] else rep.id)
            parts.append(f"<h3>{_e(title)} (ours; <a href='{_e(fname)}'>{_e(fname)}</a>)</h3>")
            values = [c["name"] for c in t["columns"]]
            if t.get("pivot") and not df.empty:
                parts.append(_pivot_html(df, t["keys"], t["pivot"], values))
            else:
                parts.append(_df_html(df, t["keys"]))
            for c in o.comparisons:
                if c.table != t["suffix"]:
                    continue
                cname = table_file(rep.id, t["suffix"])
                c.cells.assign(role=c.role, knob=", ".join(c.knob)).to_csv(
                    d / "compare" / cname, index=False
                )
                parts.append(f"<h4>Published vs ours (<a href='compare/{cname}'>CSV</a>)</h4>")
                parts.append(_comparison_html(c))
        if o.checks:
            parts.append("<h3>Published observations</h3>")
            parts.append(_checks_html(o.checks))
            for ch in o.checks:
                check_rows.append(
                    {
                        "id": rep.id,
                        "claim": ch.claim,
                        "kind": ch.kind,
                        "role": ch.role,
                        "knob": ", ".join(ch.knob),
                        "input": ch.input,
                        "holds": ch.passed,
                        "detail": ch.detail,
                        "source": ch.source,
                    }
                )
        if rep.id in env_by_id and e.file == env_by_id[rep.id][0].base.file:
            parts.append(_envelope_html(*env_by_id[rep.id]))
        if rep.notes:
            parts.append(f"<p class='note'><b>Where ours differs, and why.</b> {_e(rep.notes)}</p>")
        for path, caption in o.figures:
            rel = path.relative_to(d)
            parts.append(
                f"<figure><img src='{_e(rel)}' alt='{_e(caption)}'>"
                f"<figcaption>{_e(caption)}</figcaption></figure>"
            )
    check_cols = ["id", "claim", "kind", "role", "knob", "input", "holds", "detail", "source"]
    pd.DataFrame(check_rows, columns=check_cols).to_csv(d / "checks.csv", index=False)
    summary = core.agreement(outcomes)
    summary["experiments"] = [o.experiment.id for o in outcomes]
    summary["trials"] = sum(o.trials for o in outcomes)
    summary["sim_seconds"] = sum(o.sim_seconds for o in outcomes)
    summary["sim_seconds_by_file"] = {o.experiment.file.name: o.sim_seconds for o in outcomes}
    if envelopes:
        env_rows = [r for _, rows, _ in envelopes for r in rows]
        env_checks = [c for _, _, checks in envelopes for c in checks]
        pd.DataFrame(env_rows).to_csv(d / "envelope.csv", index=False)
        pd.DataFrame(env_checks).to_csv(d / "envelope-checks.csv", index=False)
        summary["envelope"] = _envelope_counts(env_rows, env_checks)
    (d / "index.html").write_text(_page(study.title, "\n".join(parts)), encoding="utf-8")
    return summary


def _role_counts(s: dict[str, Any], role: str) -> str:
    b = s["by_role"][role]
    parts = []
    for label, a, n in (
        ("cells", b["cells_agree"], b["cells"]),
        ("orderings", b["orders_agree"], b["orders"]),
        ("observations", b["checks_hold"], b["checks"]),
    ):
        if n:
            parts.append(f"{label} {a}/{n}")
    return ", ".join(parts) or "–"


def summary_rows(rows: Sequence[tuple[core.Study, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per study: independent agreement first, then what is not agreement."""
    table = []
    for study, s in rows:
        table.append(
            {
                "study": study.name,
                "experiments": " ".join(dict.fromkeys(s["experiments"])),
                "trials": s["trials"],
                "sim_seconds": round(s.get("sim_seconds", 0.0)),
                "independent_cells": core.fmt_ratio(s["cells_agree"], s["cells"]),
                "independent_orderings": core.fmt_ratio(s["orders_agree"], s["orders"]),
                "independent_observations": core.fmt_ratio(s["checks_hold"], s["checks"]),
                "fitted_not_counted": _role_counts(s, "fitted"),
                "sanity_checks": _role_counts(s, "input"),
                "not_evaluated": s["checks_not_evaluated"],
                "pairs_not_scored": s.get("pairs_not_scored", 0),
                "fitted_knobs": len(s.get("fitted_knobs", [])),
                "envelope": _envelope_text(s.get("envelope")),
            }
        )
    return table


def _envelope_text(env: dict[str, Any] | None) -> str:
    """Independent results of experiments with assumptions: cells reachable within their
    envelope, observations that hold in at least one variant (or in none)."""
    b = (env or {}).get("independent")
    if not b:
        return "–"
    parts = []
    if b["cells"]:
        parts.append(f"cells {b['reachable']}/{b['cells']} reachable, {b['outside']} outside")
    if b.get("observations"):
        parts.append(
            f"observations {b['observations_hold_somewhere']}/{b['observations']} hold in some "
            f"variant, {b['observations_hold_nowhere']} in none"
        )
    return "; ".join(parts) or "–"


SUMMARY_HEAD = (
    "| study | experiments | trials | independent: cells within tolerance | independent: "
    "orderings agree | independent: observations hold | fitted (shown, not counted) | "
    "sanity checks (restate an input) | not evaluated | engine time (s) |"
)


def summary_markdown(table: Sequence[dict[str, Any]]) -> list[str]:
    """The README's agreement table (``summary.md``)."""
    env = any(r.get("envelope", "–") != "–" for r in table)
    head = SUMMARY_HEAD + (" envelope: independent results |" if env else "")
    md = [head, "|---" * (11 if env else 10) + "|"]
    for r in table:
        md.append(
            f"| {r['study']} | {r['experiments']} | {r['trials']} | {r['independent_cells']} | "
            f"{r['independent_orderings']} | {r['independent_observations']} | "
            f"{r['fitted_not_counted']} | {r['sanity_checks']} | {r['not_evaluated']} | "
            f"{r['sim_seconds']} |" + (f" {r['envelope']} |" if env else "")
        )
    return md


def write_index(
    out: Path,
    rows: Sequence[tuple[core.Study, dict[str, Any]]],
    wall: float,
    quick: bool,
    skipped: Sequence[str] = (),
) -> None:
    """``index.html``, ``summary.csv``, ``summary.md`` and ``summary.json``."""
    table = summary_rows(rows)
    pd.DataFrame(table).to_csv(out / "summary.csv", index=False)
    md = summary_markdown(table)
    mode = "quick" if quick else "full"
    md.append("")
    md.append(
        "Only independent results count as agreement; fitted cells had a knob chosen to match "
        "them, sanity checks restate a configured value. Pairs of equal configurations and "
        "published ties are not scored."
    )
    md.append("")
    md.append(f"Mode: {mode}; simulation wall time {wall:.0f} s.")
    (out / "summary.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "summary.json").write_text(
        json.dumps(
            {"mode": mode, "sim_wall_seconds": wall, "studies": {s.name: x for s, x in rows}},
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    parts = [
        "<h1>tcplab: reproduction of five TCP-stack studies</h1>",
        f"<p>Mode: <b>{mode}</b>. Simulation wall time {wall:.0f} s.</p>",
        "<p>Only <b>independent</b> results count as agreement. <i>Fitted</i> results had a knob "
        "chosen to match them (listed on each study's page); <i>sanity checks</i> restate a "
        "configured value. Neither is agreement.</p>",
        "<table><tr><th class='k'>study</th><th class='k'>experiments</th><th>trials</th>"
        "<th>independent: cells within tolerance</th><th>independent: orderings agree</th>"
        "<th>independent: observations hold</th><th>fitted (not counted)</th>"
        "<th>sanity checks</th><th>not evaluated</th></tr>",
    ]
    for (study, _), r in zip(rows, table, strict=True):
        parts.append(
            f"<tr><td class='k'><a href='{_e(study.name)}/index.html'>{_e(study.title)}</a>"
            f"<br><small>{_e(study.name)}</small></td><td class='k'>{_e(r['experiments'])}</td>"
            f"<td>{r['trials']}</td><td>{r['independent_cells']}</td>"
            f"<td>{r['independent_orderings']}</td><td>{r['independent_observations']}</td>"
            f"<td class='fit'>{_e(r['fitted_not_counted'])}</td>"
            f"<td class='inp'>{_e(r['sanity_checks'])}</td><td>{r['not_evaluated']}</td></tr>"
        )
    parts.append("</table>")
    if skipped:
        parts.append("<p class='err'>Not run: " + "; ".join(_e(s) for s in skipped) + "</p>")
    (out / "index.html").write_text(_page("tcplab reproduction", "\n".join(parts)), "utf-8")
