"""Expression-level checks: what the extension checks while parsing DEFINE and MEASURES
(pattern function arguments, ``V.*``, window functions)."""

from __future__ import annotations

from ..lexer import SYMBOL, WORD, Token, closing_paren
from .messages import message
from .model import Item, VariableNames
from .problems import ClauseSyntaxError, LeftToSpark

_NAVIGATION = {"PREV", "NEXT", "FIRST", "LAST"}
_LITERAL_WORDS = {"NULL", "TRUE", "FALSE"}


# Symbols that no Spark expression contains, and the operators an expression can neither
# start nor end with.
_FOREIGN_SYMBOLS = {"$", "{", "}", ";"}
_BINARY_OPERATORS = {"=", "<", ">", "/", "%", "&", "|", "^", ",", "AND", "OR"}
_TRAILING_OPERATORS = _BINARY_OPERATORS | {"+", "-", "!", ".", "NOT"}


def check_expression_syntax(item: Item) -> None:
    """Leaves the statement to Spark when an expression item is certainly not an expression
    Spark can parse: Spark's parser then reports its own syntax error, before any of the
    clause's analysis errors and before the clause errors that follow the item."""
    ts = item.tokens

    def op(t: Token) -> str:
        return t.text.upper() if t.kind == WORD else t.text if t.kind == SYMBOL else ""

    depth = 0
    for k, t in enumerate(ts):
        if t.kind == SYMBOL and t.text in _FOREIGN_SYMBOLS:
            raise LeftToSpark()
        if t.is_symbol(".") and not (
            k + 1 < len(ts) and (ts[k + 1].identifier is not None or ts[k + 1].is_symbol("*"))
        ):
            raise LeftToSpark()
        if t.is_symbol("("):
            depth += 1
        elif t.is_symbol(")"):
            depth -= 1
        elif depth == 0 and t.is_word("AS") and k + 2 < len(ts):
            raise LeftToSpark()  # `<expression> AS <name>` ends the item
    if ts and (op(ts[0]) in _BINARY_OPERATORS or op(ts[-1]) in _TRAILING_OPERATORS):
        raise LeftToSpark()


def _error(offset: int, near: str, key: str, *args: object) -> ClauseSyntaxError:
    return ClauseSyntaxError(offset, near, message(key, *args))


def matching(tokens: list[Token], open_at: int) -> int:
    """The ``)`` closing the ``(`` at ``open_at``, or the last token when none does."""
    close = closing_paren(tokens, open_at)
    return len(tokens) - 1 if close < 0 else close


def _split_args(tokens: list[Token], open_at: int, close: int) -> list[list[Token]]:
    args: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    for tok in tokens[open_at + 1 : close]:
        if tok.is_symbol("(") or tok.is_symbol("["):
            depth += 1
        elif tok.is_symbol(")") or tok.is_symbol("]"):
            depth -= 1
        if depth == 0 and tok.is_symbol(","):
            args.append(current)
            current = []
        else:
            current.append(tok)
    if current or args:
        args.append(current)
    return args


def subquery_ranges(tokens: list[Token]) -> list[tuple[int, int]]:
    """Token index ranges ``[open, close]`` of parenthesized subqueries ``( SELECT|WITH ...``."""
    ranges = []
    for k, tok in enumerate(tokens):
        if (
            tok.is_symbol("(")
            and k + 1 < len(tokens)
            and (tokens[k + 1].is_word("SELECT") or tokens[k + 1].is_word("WITH"))
        ):
            ranges.append((k, matching(tokens, k)))
    return ranges


def outside_subqueries(tokens: list[Token]) -> list[int]:
    inside: set[int] = set()
    for a, b in subquery_ranges(tokens):
        inside.update(range(a, b + 1))
    return [k for k in range(len(tokens)) if k not in inside]


def check_pattern_functions(sql: str, item: Item, names: VariableNames) -> None:
    """Navigation, CLASSIFIER and MATCH_NUMBER calls with arguments they cannot take."""
    ts = item.tokens
    for k in outside_subqueries(ts):
        tok = ts[k]
        if tok.kind != WORD or k + 1 >= len(ts) or not ts[k + 1].is_symbol("("):
            continue
        if k > 0 and ts[k - 1].is_symbol("."):
            continue
        name = tok.text.upper()
        if name not in _NAVIGATION and name not in ("CLASSIFIER", "MATCH_NUMBER"):
            continue
        close = matching(ts, k + 1)
        args = _split_args(ts, k + 1, close)
        near = sql[tok.start : ts[close].end]
        if name in _NAVIGATION:
            first_word = args[0][0] if args and args[0] else None
            ignore_nulls = (
                name in ("FIRST", "LAST")
                and len(args) == 1
                and len(args[0]) >= 3
                and args[0][-2].is_word("IGNORE")
                and args[0][-1].is_word("NULLS")
            )
            if ignore_nulls:
                raise _error(tok.start, near, "nav_name_in_match_recognize_is_row_navigation", name)
            if any(not a for a in args):
                continue  # `f(x, )`: Spark's own syntax error
            distinct = first_word is not None and first_word.is_word("DISTINCT")
            if not args or len(args) > 2 or distinct:
                raise _error(
                    tok.start, near, "name_takes_an_expression_and_an_optional_offset", name
                )
        elif name == "CLASSIFIER":
            if not args:
                continue
            single = (
                len(args) == 1
                and len(args[0]) == 1
                and args[0][0].identifier is not None
                and not (args[0][0].kind == WORD and args[0][0].text.upper() in _LITERAL_WORDS)
            )
            if not single:
                raise _error(
                    tok.start, near, "classifier_takes_no_argument_or_one_pattern_variable"
                )
        elif args:
            raise _error(tok.start, near, "match_number_takes_no_arguments")


def check_stars_and_windows(sql: str, item: Item, names: VariableNames) -> None:
    """``V.*`` anywhere but as the argument of count, and window functions (``OVER``),
    outside the item's subqueries."""
    ts = item.tokens
    for k in outside_subqueries(ts):
        tok = ts[k]
        if (
            tok.identifier is not None
            and k + 2 < len(ts)
            and ts[k + 1].is_symbol(".")
            and ts[k + 2].is_symbol("*")
            and not (k > 0 and ts[k - 1].is_symbol("."))
            and names.lookup(tok) is not None
        ):
            counted = (
                k >= 2
                and ts[k - 1].is_symbol("(")
                and ts[k - 2].is_word("COUNT")
                and not (k >= 3 and ts[k - 3].is_symbol("."))
                and k + 3 < len(ts)
                and ts[k + 3].is_symbol(")")
            )
            if not counted:
                q = tok.identifier
                raise _error(
                    tok.start,
                    sql[tok.start : ts[k + 2].end],
                    "q_is_allowed_only_as_the_argument_of",
                    q,
                )
        if tok.is_word("OVER") and k + 1 < len(ts) and k > 0:
            start = _window_function_start(ts, k)
            spec = ts[k + 1]
            if start is None or not (spec.is_symbol("(") or spec.identifier is not None):
                continue
            end = ts[matching(ts, k + 1)].end if spec.is_symbol("(") else spec.end
            raise _error(
                ts[start].start,
                sql[ts[start].start : end],
                "window_functions_over_cannot_be_used_in_measures",
            )


def _window_function_start(ts: list[Token], over: int) -> int | None:
    """The index of the name of the function call that ``OVER`` at ``over`` follows:
    ``f(...) [WITHIN GROUP (...)] [FILTER (...)] [IGNORE|RESPECT NULLS] OVER``."""
    j = over - 1
    if (
        j >= 1
        and ts[j].is_word("NULLS")
        and (ts[j - 1].is_word("IGNORE") or ts[j - 1].is_word("RESPECT"))
    ):
        j -= 2

    while j >= 0 and ts[j].is_symbol(")"):
        open_at = closing_paren(ts, j, backwards=True)
        if open_at < 1:
            return None
        before = ts[open_at - 1]
        if before.is_word("FILTER"):
            j = open_at - 2
        elif before.is_word("GROUP") and open_at >= 2 and ts[open_at - 2].is_word("WITHIN"):
            j = open_at - 3
        elif before.identifier is not None:
            name = open_at - 1
            while name >= 2 and ts[name - 1].is_symbol(".") and ts[name - 2].identifier is not None:
                name -= 2
            return name
        else:
            return None
    return None
