"""``PATTERN A B``: a row pattern written without its parentheses (the extension's
``BarePattern``), found when a clause has no ``PATTERN (``, so that the error names the
missing parentheses rather than the clause."""

from __future__ import annotations

from ..lexer import QUOTED, STRING, SYMBOL, WORD, Token

# Words that may follow a column named ``pattern`` inside an expression.
_EXPRESSION_WORDS = {
    "AND", "OR", "IS", "NOT", "IN", "LIKE", "ILIKE", "RLIKE", "REGEXP", "BETWEEN", "AS", "DIV",
    "ASC", "DESC", "NULLS", "OVER", "ESCAPE", "SIMILAR", "COLLATE",
}  # fmt: skip


def bare_pattern(tokens: list[Token]) -> int:
    """The index of the word PATTERN, outside parentheses, followed by what can start a row
    pattern and cannot continue an expression (so that a column named ``pattern`` in
    MEASURES or DEFINE is not taken for the clause); -1 when there is none."""
    depth = 0
    for k, tok in enumerate(tokens):
        if (
            depth == 0
            and tok.is_word("PATTERN")
            and k + 1 < len(tokens)
            and _starts_pattern(tokens[k + 1])
            and not (k > 0 and tokens[k - 1].is_symbol("."))
        ):
            return k
        if tok.is_symbol("("):
            depth += 1
        elif tok.is_symbol(")"):
            depth -= 1
    return -1


def _starts_pattern(tok: Token) -> bool:
    if tok.kind == WORD:
        return tok.text.upper() not in _EXPRESSION_WORDS
    if tok.kind == STRING:
        return tok.text.startswith('"')  # a double-quoted variable
    return tok.kind == QUOTED or (tok.kind == SYMBOL and tok.text in "^${")
