"""A small TOML writer for the resolved scenario (``scenario.toml`` in a run directory).

It writes the subset of TOML that scenario files use: scalars (str, int, float, bool), arrays,
tables, arrays of tables, and inline tables for tables nested inside arrays. The output parses
back with :mod:`tomllib` to the same document (tested).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

__all__ = ["dumps"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if ("." in r or "e" in r or "n" in r) else r + ".0"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _is_table_array(v: object) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _emit_table(lines: list[str], table: Mapping[str, object], prefix: str, header: str | None):
    scalars = [
        (k, v) for k, v in table.items() if not isinstance(v, Mapping) and not _is_table_array(v)
    ]
    subtables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    arrays = [(k, v) for k, v in table.items() if _is_table_array(v)]
    if header is not None:
        if lines:
            lines.append("")
        lines.append(header)
    for k, v in scalars:
        lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in subtables:
        name = f"{prefix}{_key(k)}"
        _emit_table(lines, v, name + ".", f"[{name}]")  # type: ignore[arg-type]
    for k, v in arrays:
        name = f"{prefix}{_key(k)}"
        for item in v:  # type: ignore[union-attr]
            _emit_table(lines, item, name + ".", f"[[{name}]]")


def dumps(doc: Mapping[str, object], header_comment: str | None = None) -> str:
    """Serialize *doc* as TOML text."""
    lines: list[str] = []
    if header_comment:
        lines.extend("# " + line if line else "#" for line in header_comment.splitlines())
        lines.append("")
    body: list[str] = []
    _emit_table(body, doc, "", None)
    lines.extend(body)
    return "\n".join(lines) + "\n"
