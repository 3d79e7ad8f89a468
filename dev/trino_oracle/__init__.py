"""Trino as a live oracle: random MATCH_RECOGNIZE cases run in Trino and in this extension,
compared result by result. Run with ``dev/trino-oracle``; see docs/trino-oracle.md."""
