"""A MATCH_RECOGNIZE clause split into its parts, and how names map onto its variables."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lexer import QUOTED, Token
from .pattern import Pattern


@dataclass
class Item:
    """One item of a list clause: ``start``/``end`` offsets and its tokens."""

    start: int
    end: int
    tokens: list[Token]


@dataclass
class Define:
    name: str
    name_token: Token
    condition: Item
    item: Item


@dataclass
class Subset:
    name: str
    name_token: Token
    members: list[tuple[str, Token]]
    start: int
    end: int


@dataclass
class Clause:
    """A MATCH_RECOGNIZE clause split into its parts (offsets into the statement)."""

    keyword: Token
    open: Token
    close: Token
    partition_by: list[Item] = field(default_factory=list)
    order_by: list[Item] = field(default_factory=list)
    measures: list[Item] = field(default_factory=list)
    rows_per_match: str | None = None
    rows_per_match_span: tuple[int, int] | None = None
    after_match_skip: tuple[str, str | None, Token | None] | None = None  # (kind, var, token)
    after_match_skip_span: tuple[int, int] | None = None
    strategy: str | None = None
    strategy_span: tuple[int, int] | None = None
    pattern: Pattern = field(default_factory=lambda: Pattern("empty"))
    pattern_span: tuple[int, int] = (0, 0)  # the text between PATTERN's parentheses
    pattern_keyword: Token | None = None
    within: tuple[str, str] | None = None  # ("interval", text) or ("rows", n)
    within_span: tuple[int, int] | None = None
    subsets: list[Subset] = field(default_factory=list)
    subset_keyword: Token | None = None
    defines: list[Define] = field(default_factory=list)
    define_keyword: Token | None = None
    quoted_variables: list[str] = field(default_factory=list)

    @property
    def variables(self) -> list[str]:
        return self.pattern.variables


class VariableNames:
    """How a name written in an expression maps onto the pattern variables: quoted names
    keep their case, unquoted ones are upper-cased (an exact-case match is accepted too)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    @staticmethod
    def canonical(token: Token) -> str:
        name = token.identifier or ""
        return name if token.kind == QUOTED else name.upper()

    def lookup(self, token: Token) -> str | None:
        name = self.canonical(token)
        if name in self.names:
            return name
        written = token.identifier
        return written if written in self.names else None


def measure_is_named(item: Item) -> bool:
    """Whether a MEASURES item certainly or possibly has a name (``expr [AS] name``).

    Only an item that certainly has none is reported: one ending in something that cannot
    be an alias (a parenthesis, a literal, a qualified name or a lone name)."""
    ts = item.tokens
    if not ts or ts[-1].identifier is None:
        return False
    if len(ts) >= 2 and ts[-2].is_word("AS"):
        return True
    if len(ts) == 1:
        return False
    return not ts[-2].is_symbol(".")


def measure_name(item: Item) -> Token | None:
    """The name token of ``expr AS name`` (only the explicit form)."""
    ts = item.tokens
    if len(ts) >= 3 and ts[-2].is_word("AS") and ts[-1].identifier is not None:
        return ts[-1]
    return None
