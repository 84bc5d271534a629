"""The build backend of the Python package: maturin's, with one step before each wheel.

maturin builds the native module ``claimdag._claimdag``. The wheel also carries the native
``claimdag`` command, with every feature of ``cargo install claimdag`` (the MCP server, the
pane, ``work``, ``copy``), installed as a script: the ``claimdag`` a Python user runs is the
same executable, started without an interpreter. So before maturin builds a wheel this
builds that command with cargo and puts it where ``[tool.maturin] data`` points
(``python/wheel-data/scripts``). Everything else is maturin's own hook.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import maturin
from maturin import (  # noqa: F401  (the hooks this backend does not change)
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "python" / "wheel-data" / "scripts"

# maturin reads `data` in every hook and refuses a directory that does not exist (a fresh
# checkout, an unpacked sdist); it stays empty until a wheel is built.
SCRIPTS.parent.mkdir(parents=True, exist_ok=True)
# maturin warns when it is not the backend pyproject.toml names; here it runs inside it.
os.environ.setdefault("MATURIN_NO_MISSING_BUILD_BACKEND_WARNING", "1")


def _cargo_build_command() -> Path:
    """Builds the `claimdag` binary in release mode; returns its path."""
    cargo = os.environ.get("CARGO", "cargo")
    argv = [cargo, "build", "--release", "--locked", "--bin", "claimdag",
            "--manifest-path", str(ROOT / "Cargo.toml"),
            "--message-format=json-render-diagnostics"]
    sys.stderr.write(f"== building the claimdag command: {' '.join(argv)}\n")
    sys.stderr.flush()
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout
    except FileNotFoundError:
        raise SystemExit(f"error: {cargo} was not found: building claimdag from source "
                         "needs a Rust toolchain (https://rustup.rs)") from None
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"error: cargo could not build the claimdag command "
                         f"(exit status {e.returncode})") from None
    for line in out.splitlines():
        msg = json.loads(line)
        if (msg.get("reason") == "compiler-artifact" and msg.get("executable")
                and msg["target"]["name"] == "claimdag"):
            return Path(msg["executable"])
    raise SystemExit("error: cargo built no claimdag executable")


def _place_command() -> None:
    built = _cargo_build_command()
    SCRIPTS.mkdir(parents=True, exist_ok=True)
    dest = SCRIPTS / "claimdag"
    tmp = dest.with_suffix(".tmp")
    shutil.copyfile(built, tmp)
    # The release profile keeps line tables for Rust backtraces; the wheel needs none.
    strip = shutil.which("strip")
    if strip:
        subprocess.run([strip, "--strip-all", str(tmp)], check=True)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    """The wheel: the native command first, then maturin's wheel around the module."""
    _place_command()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """An editable install (pip install -e): the command is built and installed too."""
    _place_command()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
