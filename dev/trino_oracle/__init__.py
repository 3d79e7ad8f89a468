"""Trino as a live oracle: random MATCH_RECOGNIZE cases run in Trino and in this extension,
compared result by result. Run with ``dev/trino-oracle``; see docs/trino-oracle.md."""

import sys
from pathlib import Path

# The project's random case generator, Python reference and result comparison live in tests/.
_TESTS = str(Path(__file__).resolve().parents[2] / "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
