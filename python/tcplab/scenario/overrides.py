"""The ``--set FIELD=VALUE`` override language (also the field paths of sweeps, tcplab.sweep):
a dotted path into the TOML document, with ``[[flow]]``/``[[host]]`` tables addressed by index or
name, and a value that is a TOML literal when it parses as one."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

import tomli_w

from ..errors import ScenarioError, nearest
from .fields import tname


def parse_override_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal when it parses as one (``true``, ``8``, ``0.7``,
    ``"x"``, ``{name = "cubic"}``), else the text as a string (``8MB``, ``reno``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def toml_literal(value: Any) -> str:
    """*value* as a TOML inline value (the right-hand side of a ``--set``; the inverse of
    :func:`parse_override_value`), written by tomli-w; tables and arrays inline, since ``--set``
    takes one line."""
    if isinstance(value, Mapping):
        items = (f"{_toml_key(k)} = {toml_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def _toml_key(key: str) -> str:
    return tomli_w.dumps({key: 0}).rsplit(" = ", 1)[0]


def apply_overrides(
    doc: Mapping[str, Any], overrides: Iterable[str], file: str = "<scenario>"
) -> tuple[dict[str, Any], dict[str, str]]:
    """Apply ``FIELD=VALUE`` overrides to a copy of *doc*.

    FIELD is a dotted path; array tables (``flow``, ``host``) are addressed by 0-based index or by
    name: ``flow.0.cca=reno``, ``flow.cubic.window=8MB``, ``path.rate=1Gbit``. Missing tables on
    the way are created (``path.reverse.rate=...``); setting ``flow.X.cca.<param>`` when ``cca`` is
    a string turns it into a table. Returns the new document and a map from each override's
    canonical (index-based) path to its text, used to say where a bad value came from.
    """
    new = copy.deepcopy(dict(doc))
    origins: dict[str, str] = {}
    for item in overrides:
        where = f"--set {item}"
        if "=" not in item:
            raise ScenarioError(
                file, "", f"{where}: expected FIELD=VALUE", allowed="e.g. --set path.rate=1Gbit"
            )
        key, text = item.split("=", 1)
        key = key.strip()
        parts = key.split(".")
        if not key or any(not p for p in parts):
            raise ScenarioError(
                file, key, f"{where}: bad field path", allowed="a dotted path like flow.0.cca"
            )
        value = parse_override_value(text)
        node: Any = new
        canon: list[str] = []
        for j, part in enumerate(parts):
            last = j == len(parts) - 1
            here = ".".join(canon)
            if isinstance(node, list):
                idx = _resolve_item(node, part, here, file, where)
                canon.append(str(idx))
                if last:
                    if not isinstance(value, dict):
                        raise ScenarioError(
                            file,
                            ".".join(canon),
                            f"{where}: cannot replace a whole [[{here}]] table with a "
                            f"{tname(value)}",
                            allowed=f"a field of it, e.g. {'.'.join(canon)}.name=...",
                        )
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                canon.append(part)
                if last:
                    node[part] = value
                    break
                if part not in node:
                    if part in ("flow", "host", "background") and not here:
                        raise ScenarioError(
                            file,
                            part,
                            f"{where}: the scenario has no [[{part}]] tables to address",
                        )
                    node[part] = {}
                child = node[part]
                if part == "cca" and isinstance(child, str):
                    child = node[part] = {"name": child}
                if not isinstance(child, (dict, list)):
                    raise ScenarioError(
                        file,
                        ".".join(canon),
                        f"{where}: is a {tname(child)}, so it has no field '{parts[j + 1]}'",
                    )
                node = child
        origins[".".join(canon)] = where
    return new, origins


def _resolve_item(items: list[Any], part: str, here: str, file: str, where: str) -> int:
    if part.isdigit():
        idx = int(part)
        if idx >= len(items):
            raise ScenarioError(
                file,
                f"{here}.{part}",
                f"{where}: there are only {len(items)} [[{here}]] tables",
                allowed=f"an index from 0 to {len(items) - 1} or a name",
            )
        return idx
    names = []
    for i, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        if name is None and here == "flow":
            name = f"flow{i}"
        if name is None and here == "background":
            name = f"bg{i}"
        names.append(name)
        if name == part:
            return i
    valid = [n for n in names if isinstance(n, str)]
    near = nearest(part, valid)
    hint = f" (did you mean '{near}'?)" if near else ""
    raise ScenarioError(
        file,
        f"{here}.{part}",
        f"{where}: no [[{here}]] named '{part}'{hint}",
        allowed="an index or one of " + ", ".join(repr(n) for n in valid),
    )
