"""The content-addressed trial store behind ``--resume``.

A trial's key is the SHA-256 of (its normalized engine config including the seed, the engine's
name, the tcplab version and the engine build). The build is the SHA-256 of the compiled
simulator (``tcplab._core``'s file), so a rebuilt model never reuses results of an older one; for
the kernel engine it also includes the running kernel's release. Trials that write captures are not
stored (their pcap files live outside the result).

Layout: ``<results dir>/trials/<key[:2]>/<key>.pkl.gz`` holding ``(raw result, engine seconds)``.
Each file is written to a temporary name and renamed, so a killed run leaves no half-written entry;
an entry that cannot be read is treated as missing and rewritten. The entries are Python pickles:
share a results directory only with people you trust, as you would a Python file.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import json
import os
import pickle
import platform
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["TrialStore", "build_id", "default_results_dir"]


def default_results_dir() -> Path:
    """``$TCPLAB_RESULTS``, else ``$XDG_DATA_HOME/tcplab``, else ``~/.local/share/tcplab``."""
    env = os.environ.get("TCPLAB_RESULTS")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "tcplab"


@functools.cache
def _core_digest() -> str:
    from . import _core  # type: ignore[attr-defined]

    h = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def build_id(engine_name: str) -> str:
    """The engine build a result depends on (see the module docstring)."""
    if engine_name == "kernel":
        return f"{_core_digest()}+linux-{platform.release()}"
    return _core_digest()


class TrialStore:
    """Stored trial results under *root*/trials, keyed by :meth:`key`."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_results_dir()
        self.dir = self.root / "trials"
        self.hits = 0
        self.stored = 0

    def key(self, engine_name: str, config: dict[str, Any]) -> str | None:
        """The trial's key, or None for a trial that is not stored (it writes captures)."""
        if config.get("capture"):
            return None
        from . import __version__

        doc = {
            "engine": engine_name,
            "version": __version__,
            "build": build_id(engine_name),
            "config": config,
        }
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.pkl.gz"

    def get(self, key: str) -> tuple[dict[str, Any], float] | None:
        p = self._path(key)
        try:
            with gzip.open(p, "rb") as f:
                raw, secs = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # a damaged entry is a miss; it is rewritten when the trial finishes
            return None
        self.hits += 1
        return raw, float(secs)

    def put(self, key: str, raw: dict[str, Any], seconds: float) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=p.parent)
        try:
            with (
                os.fdopen(fd, "wb") as f,
                gzip.GzipFile(fileobj=f, mode="wb", compresslevel=3) as g,
            ):
                pickle.dump((raw, seconds), g, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self.stored += 1
