"""``python -m spark_match_recognize``: see :mod:`spark_match_recognize.cli`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import main as _cli_main

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m spark_match_recognize`` (also the ``spark-match-recognize`` script)."""
    return _cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
