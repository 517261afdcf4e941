"""Where a bench result comes from: the commit the report names."""

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git_commit():
    """The short hash of HEAD, marked when rtl/ has changes not committed; "unknown"
    outside a git checkout."""
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "rtl"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (rtl/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
