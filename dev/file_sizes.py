"""Checks that no source file grows past 400 lines without saying why at its top.

A file over the limit must state its reason within its first 30 lines, as a sentence that
starts with ``Over 400 lines:``. Scala, Python and shell files tracked by git are checked;
generated data (goldens, catalogues, JSON) is not code and is skipped. Run by ``dev/lint``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 400
REASON = "Over 400 lines:"
SUFFIXES = {".scala", ".py", ".sh", ".sbt"}


def oversized(files: list[Path]) -> list[str]:
    """The files over the limit whose top does not give the reason, as readable lines."""
    found = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > LIMIT and not any(REASON in line for line in lines[:30]):
            found.append(
                f"{path.relative_to(ROOT)}: {len(lines)} lines and no '{REASON} ...' at its top"
            )
    return found


def tracked() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return [ROOT / n for n in names if Path(n).suffix in SUFFIXES and (ROOT / n).is_file()]


def main() -> int:
    problems = oversized(tracked())
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
