"""``check()``: finding the mistakes in MATCH_RECOGNIZE clauses without starting Spark.

:func:`check` reads SQL text (one statement or a script of several) and returns the
problems Spark would report for its MATCH_RECOGNIZE clauses, with the same condition names
and the same wording as the extension itself:

* syntax errors in a clause, as ``PARSE_SYNTAX_ERROR`` (``Syntax error at or near '...':
  <hint>.``), with the line and column of the offending text;
* the analysis errors that need no table or column information
  (``MATCH_RECOGNIZE.<KIND>``): pattern variables used in DEFINE, MEASURES, CLASSIFIER or
  AFTER MATCH SKIP that are neither in PATTERN nor a SUBSET, SUBSETs over unknown
  variables or named like a pattern variable, DEFINE naming a variable absent from
  PATTERN, clause combinations that cannot go together, negation and the restrictions of
  ``SKIP TILL ANY MATCH``, duplicate measure names.

Everything that needs the catalog or the types (unknown tables and columns, wrong types,
Spark's own syntax errors inside expressions or outside the clause) is left to Spark:
:func:`check` reports nothing for it rather than guess. One case deserves a note: a
qualified name ``x.y`` in DEFINE or MEASURES whose qualifier is neither a pattern variable,
a SUBSET, nor any name written elsewhere in the statement is reported as an unknown pattern
variable, as Spark does when ``x`` is not a column of the input either; a struct column of
a table that the statement never names is the one thing that could be mistaken for it
(qualify it with the table's alias, ``t.x.y``, to be explicit).

The package also holds the clause scanner that :mod:`spark_match_recognize.transpile` uses:
a parser that splits a clause into its parts, a port of the extension's Scala
``ClauseParser`` and ``PatternParser``, over the tokens of the package's lexer
(:mod:`spark_match_recognize.lexer`, parameterized by the quoting rules of a SQL dialect).
Its modules, in the order of the data path:

* :mod:`.lookahead` questions about the next tokens; :mod:`.pattern` PATTERN;
  :mod:`.model` and :mod:`.clause` the clause and its parser; :mod:`.scanner` the clauses
  of a statement;
* :mod:`.expressions` and :mod:`.checks` the checks on expressions and on a parsed clause;
* :mod:`.statements` :func:`check` itself; :mod:`.problems` what it returns;
* :mod:`.messages` the wording of every message, from ``messages.json``, which
  ``dev/messages_catalogue.py`` generates from the Scala sources.
"""

from __future__ import annotations

from .problems import Problem, format_problems
from .statements import check

__all__ = ["Problem", "check", "format_problems"]
