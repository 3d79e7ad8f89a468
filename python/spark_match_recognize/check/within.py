"""The interval of ``WITHIN INTERVAL ...`` (the extension's ``WithinInterval``): the words it
may hold, its text as shown, and what only Spark can judge of it."""

from __future__ import annotations

from ..lexer import NUMBER, STRING, WORD, Token

_YEAR_MONTH_UNITS = {"YEAR", "YEARS", "MONTH", "MONTHS"}
_INTERVAL_UNITS = {
    "DAY", "DAYS", "HOUR", "HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS",
    "MILLISECOND", "MILLISECONDS", "MICROSECOND", "MICROSECONDS", "WEEK", "WEEKS",
} | _YEAR_MONTH_UNITS  # fmt: skip
# The words a WITHIN interval may hold (a sum of intervals or a year-month one is refused
# later, with WITHIN's own message).
_INTERVAL_WORDS = _INTERVAL_UNITS | {"TO", "INTERVAL"}


def unknown_unit(tokens: list[Token]) -> Token | None:
    """The first word of the interval's tokens that is no interval unit (``FORTNIGHT``)."""
    return next(
        (t for t in tokens if t.kind == WORD and t.text.upper() not in _INTERVAL_WORDS), None
    )


def interval_text(sql: str, tokens: list[Token]) -> str:
    """The interval as written, a comment inside it shown as one space."""
    out = []
    for k, tok in enumerate(tokens):
        gap = "" if k == 0 else sql[tokens[k - 1].end : tok.start]
        out.append((gap if not gap.strip() else " ") + tok.text)
    return "".join(out)


def valid_within_interval(tokens: list[Token]) -> bool:
    """False when the WITHIN interval is certainly not a non-negative day-time interval
    literal (Spark would reject it); True when it is, or when only Spark can tell."""
    # tokens[0] is INTERVAL
    rest = tokens[1:]
    units = [t.text.upper() for t in rest if t.kind == WORD]
    if units and all(u in _INTERVAL_UNITS or u == "TO" for u in units):
        if any(u in _YEAR_MONTH_UNITS for u in units):
            return False
    if rest and rest[0].is_symbol("-") and len(rest) > 1 and rest[1].kind in (NUMBER, STRING):
        return False
    for a, b in zip(rest, rest[1:], strict=False):
        if a.text.upper() in _INTERVAL_UNITS and b.text.upper() in _INTERVAL_UNITS:
            return False  # `MINUTE MINUTE`: two units without a value between them
    if rest and rest[0].kind == STRING:
        value = rest[0].text[1:-1].strip()
        if value.startswith("-"):
            return False
    return True
