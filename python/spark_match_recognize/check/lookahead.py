"""Questions about the tokens at and after a position, as the clause grammar asks them."""

from __future__ import annotations

from ..lexer import NUMBER, Token


class Lookahead:
    """Questions about the tokens at and after index ``k``, false past the end."""

    def __init__(self, tokens: list[Token], k: int) -> None:
        self.tokens = tokens
        self.k = k

    def word(self, off: int, word: str) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].is_word(word)

    def symbol(self, off: int, symbol: str) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].is_symbol(symbol)

    def identifier(self, off: int) -> bool:
        k = self.k + off
        return k < len(self.tokens) and self.tokens[k].identifier is not None

    def number(self, off: int) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].kind == NUMBER

    def within(self) -> bool:
        """``WITHIN INTERVAL ...`` or ``WITHIN <n>``: the WITHIN clause."""
        return self.word(0, "WITHIN") and (self.word(1, "INTERVAL") or self.number(1))
