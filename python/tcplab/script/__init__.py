"""Behaviour scripts (issue 14): a packetdrill-compatible subset of script text, parsed into events.

The format follows packetdrill's documented grammar (github.com/google/packetdrill, README and
``gtests/net/packetdrill/parser.y`` read for syntax only; no code copied): each line is a time,
then a system call, an inbound (``<``) or outbound (``>``) TCP segment, or an
``%{ assert ... }%`` block.
"""

from __future__ import annotations

from .parser import (
    ASSERT_VARS,
    Assertion,
    Event,
    Option,
    ScriptError,
    Segment,
    Syscall,
    parse_file,
    parse_script,
)

__all__ = [
    "ASSERT_VARS",
    "Assertion",
    "Event",
    "Option",
    "ScriptError",
    "Segment",
    "Syscall",
    "parse_file",
    "parse_script",
]
