"""`python -m shellexec.demo`."""

from __future__ import annotations

import sys

from shellexec.demo.cli import main

if __name__ == "__main__":
    sys.exit(main())
