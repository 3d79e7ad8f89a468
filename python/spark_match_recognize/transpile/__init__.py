"""``transpile()``: MATCH_RECOGNIZE queries from Trino, Snowflake, Oracle, Databricks and
Athena, rewritten for Spark with spark-match-recognize.

The work is split in two:

* the SQL around the clauses goes through `sqlglot <https://github.com/tobymao/sqlglot>`_
  (functions, literals, identifier quoting, date arithmetic, NULL ordering, ``FROM dual``);
* each ``MATCH_RECOGNIZE ( ... )`` clause is cut out first (sqlglot parses only part of the
  clause, and keeps no ``SUBSET``), split into its parts by the same scanner as
  :func:`~spark_match_recognize.check`, and rebuilt part by part: ``PATTERN`` text is kept
  as written (double-quoted variables become back-quoted), ``PARTITION BY``, ``ORDER BY``,
  ``MEASURES`` and ``DEFINE`` expressions are translated one by one with sqlglot, with
  ``RUNNING``/``FINAL``, ``PREV``/``NEXT``/``FIRST``/``LAST``, ``CLASSIFIER`` and
  ``MATCH_NUMBER`` protected from sqlglot's rewrites (``FIRST(x)`` is row navigation here,
  not an aggregate).

Where the meaning would change, the translation says so in the generated SQL (for
instance ``ORDER BY ts NULLS LAST`` for a Trino ``ORDER BY ts``, whose NULLs sort last) or
refuses: :class:`TranspileError` names the construct and the reason (row pattern
recognition in a ``WINDOW`` clause, Trino's ``SEEK``, functions sqlglot cannot express in
Spark, ``DISTINCT`` in pattern aggregates but ``count``, ``min`` and ``max``, ...).

The modules, in the order of the data path: :mod:`.dialects` the source dialects;
:mod:`.query` :func:`transpile` itself; :mod:`.constructs` the source constructs refused
or dropped up front; :mod:`.clause` a clause rebuilt part by part; :mod:`.expression` one
expression of it, with :mod:`.protect` keeping the pattern functions from sqlglot's
rewrites; :mod:`.sqlglot_calls` the calls into sqlglot and :mod:`.rewrites` the fixes to
its Spark output; :mod:`.errors` :class:`TranspileError`.
"""

from __future__ import annotations

from .dialects import DIALECTS
from .errors import TranspileError
from .query import MAX_NESTING, transpile

__all__ = ["DIALECTS", "MAX_NESTING", "TranspileError", "transpile"]
