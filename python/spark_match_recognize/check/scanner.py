"""Finding the MATCH_RECOGNIZE clauses of a statement (as the extension's Scala
``StatementRewriter`` does) and parsing each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..lexer import SPARK_LEXICON, WORD, Lexicon, Token, UnterminatedToken, closing_paren, tokenize
from .clause import ClauseParser
from .lookahead import Lookahead
from .messages import message
from .model import Clause, Item, VariableNames
from .pattern_table import shared_clauses
from .problems import ClauseSyntaxError, LeftToSpark


@dataclass
class FoundClause:
    clause: Clause
    body: list[Token]


def clause_starts(tokens: list[Token]) -> list[int]:
    """Indices of the MATCH_RECOGNIZE keywords that start a clause: ``match_recognize`` is
    also an ordinary identifier (a function, a table or CTE name with a column list), so
    the keyword counts only when the parenthesis opens with a clause of the clause grammar
    (one that may come first, or one written out of order)."""
    return [
        k
        for k, t in enumerate(tokens)
        if t.is_word("MATCH_RECOGNIZE")
        and k + 1 < len(tokens)
        and tokens[k + 1].is_symbol("(")
        and _opens_clause(tokens, k + 2)
    ]


def _opens_clause(t: list[Token], k: int, measures: bool = True) -> bool:
    at = Lookahead(t, k)
    return (
        (at.word(0, "PARTITION") and at.word(1, "BY"))
        or (at.word(0, "ORDER") and at.word(1, "BY"))
        or (measures and at.word(0, "MEASURES") and _measures_follow(t, k + 1))
        or (at.word(0, "ONE") and at.word(1, "ROW") and at.word(2, "PER"))
        or (at.word(0, "ALL") and at.word(1, "ROWS") and at.word(2, "PER"))
        or (at.word(0, "AFTER") and at.word(1, "MATCH") and at.word(2, "SKIP"))
        or (at.word(0, "SKIP") and at.word(1, "TILL"))
        or (at.word(0, "PATTERN") and at.symbol(1, "("))
        or (at.word(0, "SUBSET") and at.identifier(1) and at.symbol(2, "="))
        or (at.word(0, "DEFINE") and at.identifier(1) and at.word(2, "AS"))
        or (at.word(0, "PATTERNS") and at.word(1, "FROM"))
        or at.within()
    )


# Words that end no relation: a MATCH_RECOGNIZE keyword after them starts no clause of an
# input (as in the extension's StatementRewriter).
_NOT_AN_ALIAS = {
    "FROM", "JOIN", "ON", "USING", "AS", "WHERE", "SELECT", "LATERAL", "CROSS", "INNER",
    "LEFT", "RIGHT", "FULL", "OUTER", "SEMI", "ANTI", "NATURAL", "VALUES",
}  # fmt: skip


def _follows_an_input(t: list[Token], k: int) -> bool:
    """Whether the keyword at ``k`` follows something that can end a relation (a name or a
    closing parenthesis); elsewhere ``match_recognize(...)`` may be an ordinary call."""
    if k == 0:
        return False
    before = t[k - 1]
    if before.is_symbol(")"):
        return True
    return before.identifier is not None and not (
        before.kind == WORD and before.text.upper() in _NOT_AN_ALIAS
    )


def _closes_early(t: list[Token], k: int) -> bool:
    """Whether clauses of MATCH_RECOGNIZE follow its closing parenthesis at ``k - 1``: one
    ``)`` too many closed it, and Spark's parser reports the text after it."""
    at = Lookahead(t, k)
    ordering = at.word(0, "PARTITION") or at.word(0, "ORDER")  # also the query's own
    return not ordering and _opens_clause(t, k, measures=False)


def _measures_follow(t: list[Token], start: int) -> bool:
    """After MEASURES: a measure named with ``AS name``, or a later clause, before the
    parenthesis closes (not a column called ``measures``)."""
    if start >= len(t) or t[start].is_symbol(")") or t[start].is_symbol(","):
        return False
    depth = 0
    for j in range(start, len(t)):
        tok = t[j]
        if tok.is_symbol("("):
            depth += 1
        elif tok.is_symbol(")"):
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0 and tok.is_word("AS"):
            nxt = t[j + 1] if j + 1 < len(t) else None
            # `GENERATED ALWAYS AS IDENTITY` belongs to a column definition.
            if nxt is not None and nxt.identifier is not None and not nxt.is_word("IDENTITY"):
                return True
        elif depth == 0 and _opens_clause(t, j, measures=False):
            return True
    return False


class StatementScanner:
    """Finds and parses the MATCH_RECOGNIZE clauses of one statement, like the extension's
    StatementRewriter (the first syntax error stops it, as it stops Spark)."""

    def __init__(
        self,
        sql: str,
        lexicon: Lexicon = SPARK_LEXICON,
        expression_check: Callable[[Item, VariableNames], None] | None = None,
    ) -> None:
        self.sql = sql
        self.lexicon = lexicon
        self.expression_check = expression_check

    def scan(self) -> tuple[list[Token], list[FoundClause]] | None:
        """The statement's tokens and its clauses; None if there is no clause or the text
        has an unterminated token (which Spark reports in its own words).

        Raises:
            ClauseSyntaxError: for the first syntax error in a clause.
        """
        try:
            tokens = tokenize(self.sql, self.lexicon)
        except UnterminatedToken as u:
            self._raise_if_in_clause(u)
            return None
        starts = clause_starts(tokens)
        if not starts:
            return None
        found = []
        for k in starts:
            close = self._closing_paren(tokens, k + 1)
            body = tokens[k + 2 : close]
            for t in body:
                if t.is_word("MATCH_RECOGNIZE"):
                    raise ClauseSyntaxError(
                        t.start,
                        t.text,
                        message("match_recognize_cannot_be_nested_in_another_match"),
                    )
            try:
                shared = shared_clauses(self.sql, body, tokens[close].start)
                if shared is not None:
                    # The table's patterns are checked when the query reads them.
                    text, shared_body = shared
                    ClauseParser(
                        text,
                        tokens[k],
                        tokens[k + 1],
                        shared_body,
                        tokens[close],
                        self.expression_check,
                    ).parse()
                    continue
                parser = ClauseParser(
                    self.sql, tokens[k], tokens[k + 1], body, tokens[close], self.expression_check
                )
                found.append(FoundClause(parser.parse(), body))
            except ClauseSyntaxError as e:
                if not _follows_an_input(tokens, k):
                    # `match_recognize(pattern(1))`: Spark's parser may read it as a call.
                    raise LeftToSpark() from e
                raise
        for f in found:
            if _closes_early(tokens, tokens.index(f.clause.close) + 1):
                raise LeftToSpark()
        return tokens, found

    def _raise_if_in_clause(self, u: UnterminatedToken) -> None:
        """A string, quoted identifier or comment that never ends is reported where it
        opens when that is inside a clause; elsewhere it is Spark's to report."""
        before = tokenize(self.sql[: u.start], self.lexicon)
        if any(closing_paren(before, k + 1) < 0 for k in clause_starts(before)):
            near = self.sql[u.start : u.start + 40].split("\n", 1)[0]
            raise ClauseSyntaxError(u.start, near, message("unterminated_u_what", u.what))

    @staticmethod
    def _closing_paren(tokens: list[Token], open_at: int) -> int:
        close = closing_paren(tokens, open_at)
        if close >= 0:
            return close
        t = tokens[open_at]
        raise ClauseSyntaxError(t.start, t.text, message("missing_to_close_match_recognize"))
