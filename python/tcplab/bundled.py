"""The scenarios that ship inside the package (``tcplab/scenarios`` in the wheel).

``pip install .`` puts the repository's ``scenarios/`` tree into the installed package, so
``tcplab run quickstart``, ``tcplab list scenarios`` and ``tcplab reproduce all`` work from any
directory. In the source tree the real directory is ``python/tcplab/scenarios`` and the top-level
``scenarios`` is a symbolic link to it, so the paths in the README (``scenarios/quickstart.toml``)
keep working there.

A scenario is named by its path below that directory without ``.toml``: ``quickstart``,
``studies/jansen2005/J3``. A name never shadows a file: an argument that exists as a path is
always that file.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UserError

__all__ = ["names", "resolve", "scenarios_dir"]


def scenarios_dir() -> Path:
    """The directory of the bundled scenarios (inside the installed package)."""
    return Path(__file__).resolve().parent / "scenarios"


def names() -> list[str]:
    """Every bundled scenario's name, top-level ones first, then the study scenarios."""
    root = scenarios_dir()
    if not root.is_dir():
        return []
    found = [p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.toml")]
    return sorted(found, key=lambda n: (n.count("/"), n))


def resolve(arg: str | os.PathLike[str]) -> str:
    """*arg* if it is an existing path; else the bundled scenario it names.

    Raises a :class:`UserError` naming the argument, what was looked for and the fix when it is
    neither."""
    text = os.fspath(arg)
    if Path(text).exists():
        return text
    name = text.removesuffix(".toml")
    for cand in (name, name.removeprefix("scenarios/")):
        p = scenarios_dir() / f"{cand}.toml"
        if cand and ".." not in Path(cand).parts and p.is_file():
            return str(p)
    known = names()
    close = [n for n in known if n.rsplit("/", 1)[-1] == Path(name).name]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UserError(
        f"{text}: no such scenario file, and no bundled scenario of that name{hint}; "
        "give a path to a TOML file or a name from `tcplab list scenarios`"
    )
