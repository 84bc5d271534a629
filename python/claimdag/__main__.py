"""``python -m claimdag``: the native ``claimdag`` command the wheel installed, run with this
process's arguments (the process becomes that command, so its exit status, signals and
standard streams are the command's own)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import List, NoReturn, Optional


def _candidates() -> List[Path]:
    """Where pip puts the wheel's scripts: the environment's scripts directory, the user
    scheme's (``pip install --user``), and ``bin`` beside the package (``--target``)."""
    found: List[Path] = []
    scripts = sysconfig.get_path("scripts")
    if scripts:
        found.append(Path(scripts))
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        found.append(Path(sysconfig.get_path("scripts", scheme=user_scheme)))
    found.append(Path(__file__).resolve().parent.parent / "bin")
    return [d / "claimdag" for d in found]


def find_command() -> Optional[str]:
    """The path of the native ``claimdag`` command installed with this package, or None."""
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def main() -> NoReturn:
    """Replaces this process with the ``claimdag`` command and this process's arguments."""
    command = find_command()
    if command is None:
        tried = ", ".join(str(p) for p in _candidates())
        sys.stderr.write(
            "error: the claimdag command that comes with this package is not installed "
            f"(looked for {tried}); reinstall the wheel with pip, or build the command with "
            "cargo install claimdag\n"
        )
        sys.exit(127)
    os.execv(command, ["claimdag", *sys.argv[1:]])


if __name__ == "__main__":
    main()
