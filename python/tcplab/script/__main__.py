"""``python -m tcplab.script FILE...``: parse-check behaviour scripts (exit 2 if any is bad).

The simulator and kernel runners of issue 14 are not written yet; this checks the syntax only.
"""

from __future__ import annotations

import sys

from .parser import ScriptError, parse_file


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m tcplab.script FILE...", file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            events = parse_file(path)
        except ScriptError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        print(f"{path}: ok ({len(events)} events)")
    return status


if __name__ == "__main__":
    sys.exit(main())
