"""Loading a scenario: :func:`read_document` reads a TOML file (errors name the file) or copies a
parsed mapping — the one reader of scenario files, which :mod:`tcplab.sweep` uses too — and
:func:`load` reads, applies overrides, and validates against the engine's catalog."""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import engines
from ..catalog import Catalog
from ..errors import ScenarioError
from .fields import Ctx
from .model import Scenario
from .overrides import apply_overrides
from .validate import validate

#: The name messages give a document that did not come from a file.
UNNAMED = "<scenario>"


def read_document(
    source: str | os.PathLike[str] | Mapping[str, Any], file: str | None = None
) -> tuple[dict[str, Any], str]:
    """The parsed TOML document of *source* (a path, or a mapping, copied) and the file name that
    messages use: the path, or for a mapping *file* (default ``<scenario>``). A file that is
    missing, unreadable, not UTF-8 or not TOML is a :class:`ScenarioError` naming it."""
    if isinstance(source, Mapping):
        return copy.deepcopy(dict(source)), file if file is not None else UNNAMED
    path = os.fspath(source)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError(path, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(path, "", f"cannot read the file ({e})") from None
    try:
        return tomllib.loads(text), path
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(path, "", f"not valid TOML: {e}") from None


def load(
    source: str | os.PathLike[str] | Mapping[str, Any] | Scenario,
    *,
    overrides: Iterable[str] = (),
    trials: int | None = None,
    seed: int | None = None,
    engine: str | None = None,
    catalog: Catalog | None = None,
    file: str | None = None,
    origins: Mapping[str, str] | None = None,
) -> Scenario:
    """Read, override, validate and expand a scenario.

    *source* is a path to a TOML file, an already-parsed document (a mapping), or a Scenario (whose
    resolved document is used). *trials*, *seed*, *engine* replace the document's values (as the
    CLI's ``--trials`` etc. do). *catalog* defaults to the engine's
    (:func:`tcplab.engines.catalog`).
    *file* names a parsed document in messages (and gives its default name); *origins* maps
    dotted fields to where their values came from (tcplab.sweep: ``sweep point 'rtt=50ms'``).
    """
    if isinstance(source, Scenario):
        doc: dict[str, Any] = copy.deepcopy(source.resolved)
        file = source.file
    else:
        doc, file = read_document(source, file)
    doc, set_origins = apply_overrides(doc, overrides, file)
    origins = {**(origins or {}), **set_origins}
    for key, value, flag in (
        ("trials", trials, "--trials"),
        ("seed", seed, "--seed"),
        ("engine", engine, "--engine"),
    ):
        if value is not None:
            doc[key] = value
            origins[key] = f"{flag} {value}"
    if catalog is None:
        # Kernel scenarios may use every CCA the running kernel offers (tcplab.engines).
        catalog = engines.catalog("kernel" if doc.get("engine") == "kernel" else "sim")
    default_name = Path(file).stem if not file.startswith("<") else "scenario"
    return validate(Ctx(file, origins), doc, catalog, default_name)
