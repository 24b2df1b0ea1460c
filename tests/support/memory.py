"""Reading a process's memory, for the tests that bound what a client can make it hold."""

from __future__ import annotations

import re
from pathlib import Path


def rss_kib(pid: int) -> int:
    """The resident set of process `pid`, in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB$", status, re.MULTILINE)
    assert match is not None, status
    return int(match[1])


def rss_mib(pid: int) -> int:
    """The resident set of process `pid`, in whole MiB."""
    return rss_kib(pid) // 1024


def peak_rss_kib(pid: int) -> int:
    """The highest resident set process `pid` has had (VmHWM), in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
    assert match is not None, status
    return int(match[1])
