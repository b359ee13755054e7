"""The link emulator process: ``python -m tcplab.kernel.linkem CONFIG.json``.

Runs ``tcplab._core.linkem_serve`` (crates/tcplab-linkem, in-process, no separate binary to
install) in the current network namespace — the kernel engine starts it with
``ip netns exec <emulator namespace>``. Standard output carries ``ready <epoch>`` once the sockets
are bound and, after ``stop`` (or end of file) on standard input, the report as one JSON line.

For development, when the extension is not built with the emulator, the ``tcplab-linkem`` binary
of the same crate is used instead (``$TCPLAB_LINKEM_BIN``, or the workspace's build outputs).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["Emulator", "find_dev_binary", "main"]

_REPO = Path(__file__).resolve().parents[3]


def find_dev_binary() -> str | None:
    env = os.environ.get("TCPLAB_LINKEM_BIN")
    if env:
        return env
    for sub in ("target/linkem/release", "target/release", "target/linkem/debug", "target/debug"):
        p = _REPO / sub / "tcplab-linkem"
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def _core_serve():
    try:
        from .. import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(_core, "linkem_serve", None)


def available() -> str | None:
    """How the emulator will run ("extension" or the binary's path), or None if it cannot.

    ``$TCPLAB_LINKEM_BIN`` (development) takes precedence over the extension."""
    if os.environ.get("TCPLAB_LINKEM_BIN"):
        return os.environ["TCPLAB_LINKEM_BIN"]
    if _core_serve() is not None:
        return "extension"
    return find_dev_binary()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m tcplab.kernel.linkem CONFIG.json", file=sys.stderr)
        return 2
    serve = None if os.environ.get("TCPLAB_LINKEM_BIN") else _core_serve()
    if serve is None:
        binary = find_dev_binary()
        if binary is None:
            print(
                "tcplab.kernel.linkem: tcplab._core has no linkem_serve and no tcplab-linkem "
                "binary was found; build the extension (maturin develop) or set TCPLAB_LINKEM_BIN",
                file=sys.stderr,
            )
            return 1
        os.execv(binary, [binary, argv[0]])
    cfg = Path(argv[0]).read_text()
    try:
        report = serve(cfg)
    except RuntimeError as e:
        print(f"tcplab.kernel.linkem: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return 0


class EmulatorError(RuntimeError):
    pass


class Emulator:
    """Controls one emulator process from the kernel engine."""

    def __init__(self, popen_in_ns, em_ns: str, cfg: dict[str, Any], workdir: Path) -> None:
        self.cfg_path = workdir / "linkem.json"
        self.err_path = workdir / "linkem.stderr"
        self.cfg_path.write_text(json.dumps(cfg))
        self._popen_in_ns = popen_in_ns
        self.em_ns = em_ns
        self.proc: subprocess.Popen | None = None
        self.epoch: int | None = None

    def start(self, timeout: float = 20.0) -> None:
        env = dict(os.environ)
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
        with open(self.err_path, "wb") as err:
            self.proc = self._popen_in_ns(
                self.em_ns,
                [sys.executable, "-m", "tcplab.kernel.linkem", str(self.cfg_path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
            )
        line = self._readline(timeout)
        if not line.startswith("ready"):
            raise EmulatorError(f"link emulator failed to start: {self.stderr() or line!r}")
        self.epoch = int(line.split()[1])

    def _readline(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return buf.decode(errors="replace")
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            c = os.read(fd, 1)
            if not c:
                break
            buf += c
        return buf.decode(errors="replace").strip()

    def stderr(self) -> str:
        try:
            return self.err_path.read_text().strip()
        except OSError:
            return ""

    def begin(self, t0_mono_ns: int) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(f"start {t0_mono_ns}\n".encode())
        self.proc.stdin.flush()

    def stop(self, timeout: float = 20.0) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(b"stop\n")
            self.proc.stdin.flush()
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            self.proc.kill()
            raise EmulatorError("link emulator did not stop") from e
        text = out.decode(errors="replace").strip()
        if self.proc.returncode != 0 or not text:
            raise EmulatorError(
                f"link emulator exited with {self.proc.returncode}: {self.stderr() or text!r}"
            )
        return json.loads(text.splitlines()[-1])

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


if __name__ == "__main__":
    sys.exit(main())
