"""Exceptions raised by tcplab.

Everything a user can get wrong (a scenario, a unit, an override, an output directory) raises a
subclass of :class:`UserError`; the command line prints its message and exits with status 2,
without a traceback. :class:`EngineUnavailable` means the environment lacks an engine (exit 1).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
from collections.abc import Callable, Iterable

__all__ = [
    "EngineError",
    "EngineUnavailable",
    "OutputError",
    "ScenarioError",
    "TcplabError",
    "UserError",
    "nearest",
    "run_command",
]


class TcplabError(Exception):
    """Base class of all tcplab errors."""


class UserError(TcplabError):
    """Bad input from the user: the CLI reports the message and exits with status 2."""


class ScenarioError(UserError, ValueError):
    """A scenario (or an override of it) is invalid.

    The message names the file, the field's dotted path (``flow.1.cca``), the bad value and what is
    allowed, and for unknown keys or names the nearest valid one. The parts are also available as
    attributes for programs.
    """

    def __init__(
        self,
        file: str,
        field: str,
        problem: str,
        *,
        value: object = None,
        has_value: bool = False,
        allowed: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        self.value = value
        self.has_value = has_value
        self.allowed = allowed
        self.origin = origin
        super().__init__(self._format())

    def _format(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        if self.has_value:
            where += f" = {_show(self.value)}"
        if self.origin:
            where += f" (from {self.origin})"
        msg = f"{where}: {self.problem}"
        if self.allowed:
            msg += f". Allowed: {self.allowed}"
        return msg


class OutputError(UserError):
    """The output directory cannot be used (for example it exists and is not empty)."""


class EngineError(UserError):
    """An engine rejected a normalized config (reported with the trial and its seed)."""


class EngineUnavailable(TcplabError):
    """The requested engine cannot be loaded (extension not built, kernel engine missing)."""


def _show(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def nearest(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to *name* (difflib ratio ≥ 0.6, case-insensitive; else the only
    candidate starting with *name*), or None."""
    cands = list(candidates)
    lowered = {c.lower(): c for c in cands}
    if name.lower() in lowered:
        return lowered[name.lower()]
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    if hits:
        return lowered[hits[0]]
    # An abbreviation: "nic" for "nic_rate".
    if len(name) >= 2:
        prefixed = [c for low, c in lowered.items() if low.startswith(name.lower())]
        if len(prefixed) == 1:
            return prefixed[0]
    return None


def run_command(command: Callable[[], int]) -> int:
    """Run a command-line command and return its exit status, with tcplab's errors turned into a
    message on stderr and no traceback: :class:`UserError` 2, :class:`EngineUnavailable` 1,
    Ctrl-C 130, output piped into a reader that closed it (``| head``) 0."""
    try:
        return command()
    except UserError as e:
        print(f"tcplab: error: {e}", file=sys.stderr)
        return 2
    except EngineUnavailable as e:
        print(f"tcplab: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
