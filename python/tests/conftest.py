"""Shared fixtures: the repository's scenarios and a Python port of round-robin."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo.toml"


@pytest.fixture
def demo() -> Path:
    return DEMO


def cmtlab_cli() -> list:
    """The command-line program: $CMTLAB_BIN, else `cargo run` from the repository."""
    b = os.environ.get("CMTLAB_BIN")
    if b:
        return [b]
    assert shutil.which("cargo"), "set CMTLAB_BIN or put cargo on PATH"
    return ["cargo", "run", "-q", "--release", "--manifest-path", str(ROOT / "Cargo.toml"), "--bin", "cmtlab", "--"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmtlab_cli() + list(args), capture_output=True, text=True, timeout=900)


class PyRoundRobin:
    """Classic CMT round-robin, line by line as the built-in `round-robin`: each
    transmission opportunity starts at the path after the one last sent to, fills that
    path's window, then moves on in circular order."""

    def __init__(self):
        self.last = None
        self.current = None

    def begin(self, paths):
        self.current = None

    def select(self, paths):
        n = len(paths)
        if self.current is not None and paths[self.current].can_send:
            return self.current
        after = self.current if self.current is not None else self.last
        start = 0 if after is None else after + 1
        for k in range(n):
            i = (start + k) % n
            if paths[i].can_send:
                return i
        return None

    def on_sent(self, path, tsn, nbytes):
        self.current = path
        self.last = path
