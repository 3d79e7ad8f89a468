"""The pieces of SQL that :func:`~spark_match_recognize.match_recognize` and
:func:`~spark_match_recognize.match_patterns` write from their arguments.

The arguments are pasted into the text of one statement, so each must stay what it stands
for: an argument that closed a parenthesis, added a comma or commented out the text after
it could change the statement (run a ``UNION ALL`` over another table, add a measure). So:

* a name (measure, pattern variable, SUBSET, ``name_column``) is written as one identifier:
  plain names as they are, one back-quoted identifier as given, anything else back-quoted
  with its back-quotes doubled; a name that starts and ends with a back-quote but is not one
  back-quoted identifier is refused;
* an expression (``define`` and ``measures`` values, ``partition_by`` and ``order_by`` items)
  must be one expression: every string, quoted name and comment closed, brackets balanced
  and never closing one they did not open, no ``;``, and outside brackets no ``,``, no
  ``AS`` and none of the words of a query (``SELECT``, ``FROM`` but in ``IS DISTINCT
  FROM``, ``WHERE``, ``UNION``, ``INTERSECT``, ``EXCEPT``, ``MINUS``; back-quote a column
  named like one). On a classic
  session Spark's own expression parser then reads it too (in parentheses, so that
  ``x y``, ``x`` named ``y``, is refused); a Spark Connect client has no parser to ask;
* a PATTERN has no strings, its brackets balanced; ``within`` is ``INTERVAL ...`` (a literal:
  strings, numbers, units) or ``<n> ROWS``; a relation is a table or view name.

Comments are dropped from what is written (a ``--`` comment would swallow the rest of its
line). The checks read the text with the package's lexer (:mod:`.lexer`), a port of
Spark's; an expression may still hold anything an expression may, a scalar
subquery included: they keep an argument in its place, they do not sandbox it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .lexer import NUMBER, QUOTED, STRING, SYMBOL, WORD, Token, UnterminatedToken, tokenize

#: Reads one expression with Spark's parser: None when it is one, else Spark's message.
ExpressionParser = Callable[[str], "str | None"]

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_BRACKETS = {"(": ")", "[": "]"}
_PATTERN_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_QUERY_WORDS = {"SELECT", "FROM", "WHERE", "UNION", "INTERSECT", "EXCEPT", "MINUS"}
_INTERVAL_WORDS = {
    "YEAR", "YEARS", "MONTH", "MONTHS", "WEEK", "WEEKS", "DAY", "DAYS", "HOUR", "HOURS",
    "MINUTE", "MINUTES", "SECOND", "SECONDS", "MILLISECOND", "MILLISECONDS", "MICROSECOND",
    "MICROSECONDS", "TO",
}  # fmt: skip


def type_error(message: str) -> TypeError:
    return TypeError(f"match_recognize(): {message}")


def value_error(message: str) -> ValueError:
    return ValueError(f"match_recognize(): {message}")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _refused(what: str, text: str, reason: str) -> ValueError:
    return value_error(f"{what}: {reason}, in {_shown(text)}")


def text_of(value: object, what: str) -> str:
    """``value`` as SQL text, stripped; TypeError for a non-str, ValueError for blank."""
    if not isinstance(value, str):
        raise type_error(f"{what} must be SQL text (a str), got {type(value).__name__} {value!r}")
    if not value.strip():
        raise value_error(f"{what} must not be empty")
    return value.strip()


def _tokens(text: str, what: str) -> list[Token]:
    try:
        tokens = tokenize(text)
    except UnterminatedToken as e:
        raise _refused(what, text, f"an unterminated {e.what}") from None
    for t in tokens:
        if t.is_symbol(";"):
            raise _refused(what, text, "';' would end the statement")
    return tokens


def _rejoin(text: str, tokens: list[Token]) -> str:
    """The tokens as written, the whitespace between them kept and each comment replaced by
    one space."""
    out = []
    for k, t in enumerate(tokens):
        if k:
            gap = text[tokens[k - 1].end : t.start]
            out.append(gap if _WHITESPACE.fullmatch(gap) else " ")
        out.append(t.text)
    return "".join(out)


def _depths(text: str, tokens: list[Token], what: str, pairs: dict[str, str]) -> list[int]:
    """The bracket depth of each token (0: outside brackets); ValueError unless they balance."""
    open_: list[str] = []
    depths = []
    closers = set(pairs.values())
    for t in tokens:
        depths.append(len(open_))
        if t.kind == SYMBOL and t.text in pairs:
            open_.append(pairs[t.text])
        elif t.kind == SYMBOL and t.text in closers:
            if not open_ or open_[-1] != t.text:
                raise _refused(
                    what, text, f"the {t.text!r} at offset {t.start} closes no bracket it opened"
                )
            open_.pop()
    if open_:
        raise _refused(what, text, f"a bracket is left open (no {open_[-1]!r})")
    return depths


def name(value: object, what: str) -> str:
    """A column or variable name as SQL: plain names as they are, others back-quoted."""
    if not isinstance(value, str):
        raise type_error(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value.strip():
        raise value_error(f"{what} must not be empty")
    if _PLAIN.fullmatch(value):
        return value
    if len(value) > 1 and value.startswith("`") and value.endswith("`"):
        try:
            tokens = tokenize(value)
        except UnterminatedToken:
            tokens = []
        if len(tokens) == 1 and tokens[0].kind == QUOTED:
            return value
        raise value_error(
            f"{what} {_shown(value)} is not one back-quoted identifier: give the name without "
            "back-quotes (it is quoted for you), or double each back-quote inside it"
        )
    return "`" + value.replace("`", "``") + "`"


def relation(value: object) -> str:
    """A table or view name, optionally qualified (``db.t``, ```my db`.t``)."""
    text = text_of(value, "relation")
    tokens = _tokens(text, "relation")
    names = tokens[0::2]
    dots = tokens[1::2]
    if (
        len(tokens) % 2 == 0
        or not all(t.kind == WORD or t.kind == QUOTED for t in names)
        or not all(t.is_symbol(".") for t in dots)
    ):
        raise _refused("relation", text, "not a table or view name")
    return _rejoin(text, tokens)


def expression(value: object, what: str, parse: ExpressionParser | None = None) -> str:
    """One expression, as it will be written; ValueError naming ``what`` otherwise."""
    text = text_of(value, what)
    tokens = _tokens(text, what)
    depths = _depths(text, tokens, what, _BRACKETS)
    for k, t in enumerate(tokens):
        before = tokens[k - 1] if k else None
        if depths[k] or (before is not None and before.is_symbol(".")):
            continue
        if t.is_symbol(","):
            raise _refused(what, text, "more than one expression (a ',' outside parentheses)")
        word = t.text.upper() if t.kind == WORD else ""
        if word == "AS":
            raise _refused(what, text, "AS outside parentheses would name a column")
        after_distinct = before is not None and before.is_word("DISTINCT")  # IS DISTINCT FROM
        if word in _QUERY_WORDS and not (word == "FROM" and after_distinct):
            raise _refused(
                what,
                text,
                f"{t.text} outside parentheses belongs to a query, not an expression "
                f"(back-quote a column named {t.text})",
            )
    written = _rejoin(text, tokens)
    if parse is not None:
        problem = parse(_without_semantics(written))
        if problem is not None:
            raise _refused(what, text, f"not one Spark SQL expression ({problem})")
    return written


def _without_semantics(text: str) -> str:
    """``text`` with ``RUNNING``/``FINAL`` before a call blanked, as the extension does
    before it hands an expression to Spark's parser (they are no Spark syntax)."""
    chars = list(text)
    tokens = tokenize(text)
    for k, t in enumerate(tokens[:-2]):
        if (t.is_word("RUNNING") or t.is_word("FINAL")) and tokens[k + 1].kind == WORD:
            if tokens[k + 2].is_symbol("("):
                chars[t.start : t.end] = " " * (t.end - t.start)
    return "".join(chars)


_DIRECTION_WORDS = ("ASC", "DESC")


def sort_key(value: object, what: str, parse: ExpressionParser | None = None) -> str:
    """An ORDER BY item: one expression, optionally followed by ASC/DESC and NULLS
    FIRST/LAST."""
    text = text_of(value, what)
    tokens = _tokens(text, what)
    words = [t.text.upper() if t.kind == WORD else "" for t in tokens]
    cut = len(tokens)
    if cut >= 3 and words[cut - 2] == "NULLS" and words[cut - 1] in ("FIRST", "LAST"):
        cut -= 2
    if cut >= 2 and words[cut - 1] in _DIRECTION_WORDS and not tokens[cut - 2].is_symbol("."):
        cut -= 1
    if cut == len(tokens):
        return expression(text, what, parse)
    direction = " ".join(words[cut:])
    return f"{expression(text[: tokens[cut - 1].end], what, parse)} {direction}"


def pattern(value: object) -> str:
    """The PATTERN text: no strings, its brackets balanced (so it stays in ``PATTERN (...)``)."""
    text = text_of(value, "pattern")
    tokens = _tokens(text, "pattern")
    for t in tokens:
        if t.kind == STRING:
            raise _refused("pattern", text, f"a pattern holds no string ({t.text})")
    _depths(text, tokens, "pattern", _PATTERN_BRACKETS)
    return _rejoin(text, tokens)


def within(value: object) -> str:
    """``WITHIN`` from ``INTERVAL <literal>`` or ``<n> ROWS`` (each may start with WITHIN)."""
    text = text_of(value, "within")
    tokens = _tokens(text, "within")
    body = tokens[1:] if tokens and tokens[0].is_word("WITHIN") else tokens
    rows = (
        len(body) == 2
        and body[0].kind == NUMBER
        and body[0].text.isdigit()
        and body[1].is_word("ROWS")
    )
    interval = (
        len(body) > 1 and body[0].is_word("INTERVAL") and all(_interval_part(t) for t in body[1:])
    )
    if not (rows or interval):
        raise value_error(
            f"within={text!r}: expected INTERVAL '<n>' <unit> or <n> ROWS (optionally after "
            "WITHIN), an int (rows) or a datetime.timedelta"
        )
    return "WITHIN " + _rejoin(text, body)


def _interval_part(t: Token) -> bool:
    return (
        (t.kind == STRING and t.text[0] == "'")
        or t.kind == NUMBER
        or (t.kind == WORD and t.text.upper() in _INTERVAL_WORDS)
        or t.is_symbol("-")
        or t.is_symbol("+")
    )


def string_literal(value: str) -> str:
    """``value`` as a SQL string that reads the same whatever
    ``spark.sql.parser.escapedStringLiterals`` says: quotes and backslashes, whose escapes
    that setting turns off, are written as ``chr(39)`` and ``chr(92)``."""
    parts = [
        f"chr({ord(p)})" if p in ("'", "\\") else f"'{p}'" for p in re.split(r"(['\\])", value) if p
    ]
    if not parts:
        return "''"
    return parts[0] if len(parts) == 1 else "concat(" + ", ".join(parts) + ")"


def spark_expression_parser(session: Any) -> ExpressionParser | None:
    """Spark's expression parser of a classic ``session``; None for Spark Connect."""
    jsession = getattr(session, "_jsparkSession", None)
    if jsession is None:
        return None
    parser = jsession.sessionState().sqlParser()

    def parse(text: str) -> str | None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        try:
            # In parentheses: alone, Spark reads `x y` and `x AS y` as a named expression.
            parser.parseExpression(f"({text})")
        except PySparkException as e:  # PySpark turns Spark's ParseException into its own
            return str(e).strip().split("\n")[0]
        except Py4JJavaError as e:
            return str(e.java_exception.getMessage()).strip().split("\n")[0]
        return None

    return parse
