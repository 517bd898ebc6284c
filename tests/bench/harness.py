"""What the benchmarks share: a process's memory from /proc, and running one measurement in a
temporary folder once the cached files it needs are there."""

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path


def status_mib(pid: int, field: str) -> float:
    """A memory field of /proc/PID/status (VmRSS, VmHWM, ...) in MiB; 0 when it is not there."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(measure: Callable[[Path], Coroutine], prefix: str, needed: list[Path], missing_hint: str) -> None:
    """Runs `measure(folder)` in a new temporary folder, removed after; stops first, naming the file,
    when one of `needed` is missing."""
    for path in needed:
        if not path.exists():
            sys.exit(f"{path} is missing ({missing_hint})")
    base = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        asyncio.run(measure(base))
    finally:
        shutil.rmtree(base, ignore_errors=True)
