"""The ``claimdag`` command, run by the native module: ``python -m claimdag`` and the
``claimdag`` console script both land in :func:`main`."""

from __future__ import annotations

import sys
from typing import NoReturn

from claimdag._claimdag import run_cli


def main() -> NoReturn:
    """Runs the CLI with this process's arguments and exits with its status."""
    sys.exit(run_cli(["claimdag", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
