"""The clause parser: splits the body of ``MATCH_RECOGNIZE ( ... )`` into its clauses."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from ..lexer import Token, closing_paren
from .bare_pattern import bare_pattern
from .lookahead import Lookahead
from .messages import limit, message
from .model import Clause, Define, Item, Subset, VariableNames, measure_is_named
from .pattern import Pattern, PatternParser
from .problems import ClauseSyntaxError
from .within import interval_text, unknown_unit, valid_within_interval


class ClauseParser:
    """Splits the body of ``MATCH_RECOGNIZE ( body )`` into its clauses (a port of the
    extension's ClauseParser: same order of checks, same messages). Expressions are not
    parsed; ``expression_check`` is called on each expression item (PARTITION BY, ORDER
    BY, MEASURES, DEFINE) in the order Spark parses them."""

    def __init__(
        self,
        sql: str,
        keyword: Token,
        open_paren: Token,
        tokens: list[Token],
        close_paren: Token,
        expression_check: Callable[[Item, VariableNames], None] | None = None,
    ) -> None:
        self.sql = sql
        self.tokens = tokens
        self.body_end = close_paren.start
        self.i = 0
        self.clause = Clause(keyword, open_paren, close_paren)
        self.expression_check = expression_check or (lambda item, names: None)
        self.pattern_open = -1
        self.pattern_close = -1

    def parse(self) -> Clause:
        c = self.clause
        c.pattern = self._find_pattern()
        names = VariableNames(set(c.pattern.variables) | self._scan_subset_names())
        if self._at_words("PARTITION", "BY"):
            self.i += 2
            c.partition_by = self._items("PARTITION BY")
            for item in c.partition_by:
                self.expression_check(item, names)
        if self._at_words("ORDER", "BY"):
            self.i += 2
            c.order_by = self._items("ORDER BY")
            for item in c.order_by:
                self.expression_check(self._sort_expression(item), names)
        if self._at_word("MEASURES"):
            self.i += 1
            c.measures = self._items("MEASURES")
            for item in c.measures:
                self.expression_check(item, names)
                if not measure_is_named(item):
                    self._fail(item.end, "", "each_measure_needs_a_name_expression_as_name")
        self._rows_per_match()
        while True:
            if c.after_match_skip is None and self._at_words("AFTER", "MATCH"):
                self._skip()
            elif c.strategy is None and self._at_words("SKIP", "TILL"):
                self._strategy()
            else:
                break
        c.pattern_keyword = self._current("PATTERN")
        self._expect_word("PATTERN", message("pattern_clause"))
        self.i = self.pattern_close + 1
        if self._at_word("WITHIN"):
            self._within()
        if self._at_word("SUBSET"):
            c.subset_keyword = self.tokens[self.i]
            self.i += 1
            self._subsets()
        if self._at_word("DEFINE"):
            c.define_keyword = self.tokens[self.i]
            self.i += 1
            items = self._items("DEFINE")
            if len(items) > limit("MaxPatternVariables"):
                extra = items[limit("MaxPatternVariables")]
                self._fail(
                    extra.start,
                    self.sql[extra.start : extra.end],
                    "define_has_more_than_maxpatternvariables_items_pattern_variable",
                )
            for item in items:
                c.defines.append(self._define(item, names))
        if self.i < len(self.tokens):
            self._fail_at(
                self.tokens[self.i], "unexpected_text_in_match_recognize_clauses_must_appear"
            )
        return c

    # ---- PATTERN

    def _find_pattern(self) -> Pattern:
        t = self.tokens
        idx = self._index_at_depth_zero(
            lambda k: t[k].is_word("PATTERN") and k + 1 < len(t) and t[k + 1].is_symbol("(")
        )
        if idx < 0:
            bare = bare_pattern(t)
            if bare >= 0:
                self._fail_at(
                    t[bare + 1], "pattern_needs_parentheses_around_the_row_pattern_pattern"
                )
            self._fail(self.body_end, ")", "match_recognize_requires_a_pattern_clause")
        self.pattern_open = idx + 1
        self.pattern_close = self._matching_paren(self.pattern_open)
        start, end = t[self.pattern_open].end, t[self.pattern_close].start
        self.clause.pattern_span = (start, end)
        parser = PatternParser(self.sql, start, end)
        pattern = parser.parse()
        self.clause.quoted_variables = parser.quoted
        return pattern

    def _scan_subset_names(self) -> set[str]:
        t = self.tokens
        idx = self._index_at_depth_zero(lambda k: k > self.pattern_close and t[k].is_word("SUBSET"))
        if idx < 0:
            return set()
        return {
            VariableNames.canonical(t[k])
            for k in range(idx + 1, len(t))
            if k + 1 < len(t) and t[k + 1].is_symbol("=") and t[k].identifier is not None
        }

    # ---- lists

    def _items(self, clause: str) -> list[Item]:
        out: list[Item] = []
        depth = 0
        item_start = self.i
        t = self.tokens

        def close(at: int) -> None:
            if at == item_start:
                if at >= len(t):
                    self._fail(self.body_end, ")", "an_item_of_clause_was_expected", clause)
                self._fail_at(t[at], "an_item_of_clause_was_expected", clause)
            out.append(Item(t[item_start].start, t[at - 1].end, t[item_start:at]))

        while self.i < len(t) and not (depth == 0 and self._clause_starts_at(self.i)):
            tok = t[self.i]
            if tok.is_symbol("("):
                depth += 1
            elif tok.is_symbol(")"):
                depth -= 1
            elif depth == 0 and tok.is_symbol(","):
                close(self.i)
                item_start = self.i + 1
            self.i += 1
        close(self.i)
        return out

    def _clause_starts_at(self, k: int) -> bool:
        """Whether a clause that may follow the one being read starts at token ``k``."""
        at = Lookahead(self.tokens, k)
        return (
            (at.word(0, "ORDER") and at.word(1, "BY"))
            or (at.word(0, "MEASURES") and k + 1 < len(self.tokens))
            or (at.word(0, "ONE") and at.word(1, "ROW"))
            or (at.word(0, "ALL") and at.word(1, "ROWS"))
            or (at.word(0, "AFTER") and at.word(1, "MATCH"))
            or (at.word(0, "SKIP") and at.word(1, "TILL"))
            or (at.word(0, "PATTERN") and at.symbol(1, "("))
            or (at.word(0, "SUBSET") and at.identifier(1) and at.symbol(2, "="))
            or (at.word(0, "DEFINE") and at.identifier(1) and at.word(2, "AS"))
            or at.within()
        )

    def _sort_expression(self, item: Item) -> Item:
        ts = item.tokens
        last = len(ts)
        if (
            last >= 2
            and ts[last - 2].is_word("NULLS")
            and (ts[last - 1].is_word("FIRST") or ts[last - 1].is_word("LAST"))
        ):
            last -= 2
        if last >= 1 and (ts[last - 1].is_word("ASC") or ts[last - 1].is_word("DESC")):
            last -= 1
        if last == 0:
            self._fail_at(ts[0], "an_order_by_expression_was_expected")
        return Item(item.start, ts[last - 1].end, ts[:last])

    def _define(self, item: Item, names: VariableNames) -> Define:
        ts = item.tokens
        if len(ts) < 3 or ts[0].identifier is None or not ts[1].is_word("AS"):
            self._fail_at(ts[0], "define_items_are_written_variable_as_condition")
        name = names.lookup(ts[0]) or VariableNames.canonical(ts[0])
        condition = Item(ts[2].start, item.end, ts[2:])
        self.expression_check(condition, names)
        return Define(name, ts[0], condition, item)

    # ---- output mode, skipping, strategy, WITHIN, SUBSET

    def _rows_per_match(self) -> None:
        start = self.tokens[self.i].start if self.i < len(self.tokens) else self.body_end
        if self._at_words("ONE", "ROW"):
            self._expect_words("ONE", "ROW", "PER", "MATCH")
            mode = "ONE ROW PER MATCH"
        elif self._at_words("ALL", "ROWS"):
            self._expect_words("ALL", "ROWS", "PER", "MATCH")
            mode = "ALL ROWS PER MATCH SHOW EMPTY MATCHES"
            if self._at_words("SHOW", "EMPTY"):
                self._expect_words("SHOW", "EMPTY", "MATCHES")
            elif self._at_words("OMIT", "EMPTY"):
                self._expect_words("OMIT", "EMPTY", "MATCHES")
                mode = "ALL ROWS PER MATCH OMIT EMPTY MATCHES"
            elif self._at_words("WITH", "UNMATCHED"):
                self._expect_words("WITH", "UNMATCHED", "ROWS")
                mode = "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
        else:
            return
        self.clause.rows_per_match = mode
        self.clause.rows_per_match_span = (start, self.tokens[self.i - 1].end)

    def _skip(self) -> None:
        start = self.tokens[self.i].start
        self._expect_words("AFTER", "MATCH", "SKIP")
        if self._at_words("PAST", "LAST"):
            self._expect_words("PAST", "LAST", "ROW")
            skip: tuple[str, str | None, Token | None] = ("PAST LAST ROW", None, None)
        elif self._at_words("TO", "NEXT"):
            self._expect_words("TO", "NEXT", "ROW")
            skip = ("TO NEXT ROW", None, None)
        else:
            self._expect_word("TO", message("after_match_skip_to_2"))
            t = self.tokens

            def variable_at(k: int) -> bool:
                # A word that starts the next clause (SKIP TO PATTERN (...)) is no variable.
                return k < len(t) and t[k].identifier is not None and not self._clause_starts_at(k)

            kind = "TO LAST"
            if self._at_word("FIRST") and variable_at(self.i + 1):
                kind = "TO FIRST"
                self.i += 1
            elif self._at_word("LAST") and variable_at(self.i + 1):
                self.i += 1
            tok = self._current(message("a_pattern_variable_after_after_match_skip_to"))
            if tok.identifier is not None and self._clause_starts_at(self.i):
                self._fail_at(tok, "after_match_skip_to_is_missing_its_target")
            if tok.identifier is None:
                self._fail_at(tok, "a_pattern_variable_was_expected")
            self.i += 1
            skip = (kind, VariableNames.canonical(tok), tok)
        self.clause.after_match_skip = skip
        self.clause.after_match_skip_span = (start, self.tokens[self.i - 1].end)

    def _strategy(self) -> None:
        start = self.tokens[self.i].start
        self._expect_words("SKIP", "TILL")
        if self._at_word("NEXT"):
            self._expect_words("NEXT", "MATCH")
            self.clause.strategy = "SKIP TILL NEXT MATCH"
        elif self._at_word("ANY"):
            self._expect_words("ANY", "MATCH")
            self.clause.strategy = "SKIP TILL ANY MATCH"
        else:
            self._fail_at(
                self._current(message("next_or_any")), "skip_till_next_match_or_skip_till_any"
            )
        self.clause.strategy_span = (start, self.tokens[self.i - 1].end)

    def _within(self) -> None:
        t = self.tokens
        keyword = t[self.i]
        self.i += 1
        if self._at_word("INTERVAL"):
            start = t[self.i].start
            first = self.i
            self.i += 1
            while self.i < len(t) and not self._clause_starts_at(self.i):
                self.i += 1
            unknown = unknown_unit(t[first : self.i])
            if unknown is not None:
                self._fail_at(
                    unknown, "unknown_interval_unit_t_text_within_interval_takes", unknown.text
                )
            text = interval_text(self.sql, t[first : self.i])
            if not valid_within_interval(t[first : self.i]):
                self._fail(start, text, "within_needs_a_non_negative_day_time_interval")
            self.clause.within = ("interval", text)
        else:
            n = self._current(message("a_row_count_after_within"))
            if not (n.text.isdigit() and int(n.text) > 0 and int(n.text) < 2**63):
                self._fail_at(n, "within_n_rows_needs_a_positive_whole_number")
            self.i += 1
            if not self._at_word("ROWS"):
                self._fail_at(keyword, "within_is_followed_by_interval_unit_or_by")
            self.i += 1
            self.clause.within = ("rows", n.text)
        self.clause.within_span = (keyword.start, t[self.i - 1].end)

    def _subsets(self) -> None:
        while True:
            tok = self._current(message("a_subset_name"))
            if tok.identifier is None:
                self._fail_at(tok, "a_subset_name_was_expected")
            self.i += 1
            self._expect_symbol("=")
            self._expect_symbol("(")
            members = []
            while True:
                m = self._current(message("a_pattern_variable"))
                if m.identifier is None:
                    self._fail_at(m, "a_pattern_variable_was_expected")
                members.append((VariableNames.canonical(m), m))
                self.i += 1
                if self.i < len(self.tokens) and self.tokens[self.i].is_symbol(","):
                    self.i += 1
                else:
                    break
            self._expect_symbol(")")
            self.clause.subsets.append(
                Subset(
                    VariableNames.canonical(tok),
                    tok,
                    members,
                    tok.start,
                    self.tokens[self.i - 1].end,
                )
            )
            if self.i < len(self.tokens) and self.tokens[self.i].is_symbol(","):
                self.i += 1
            else:
                break

    # ---- token helpers

    def _current(self, expected: str) -> Token:
        if self.i < len(self.tokens):
            return self.tokens[self.i]
        self._fail(self.body_end, ")", "expected_was_expected", expected)

    def _at_word(self, word: str) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].is_word(word)

    def _at_words(self, *words: str) -> bool:
        return all(
            self.i + k < len(self.tokens) and self.tokens[self.i + k].is_word(w)
            for k, w in enumerate(words)
        )

    def _expect_word(self, word: str, context: str) -> None:
        tok = self._current(word)
        if not tok.is_word(word):
            self._fail_at(tok, "w_was_expected_context", word, context)
        self.i += 1

    def _expect_words(self, *words: str) -> None:
        for w in words:
            self._expect_word(w, " ".join(words))

    def _expect_symbol(self, symbol: str) -> None:
        tok = self._current(f"'{symbol}'")
        if not tok.is_symbol(symbol):
            self._fail_at(tok, "s_was_expected", symbol)
        self.i += 1

    def _index_at_depth_zero(self, predicate: Callable[[int], bool]) -> int:
        depth = 0
        for k, tok in enumerate(self.tokens):
            if depth == 0 and predicate(k):
                return k
            if tok.is_symbol("("):
                depth += 1
            elif tok.is_symbol(")"):
                depth -= 1
        return -1

    def _matching_paren(self, open_at: int) -> int:
        close = closing_paren(self.tokens, open_at)
        if close < 0:
            self._fail_at(self.tokens[open_at], "missing_to_close_pattern")
        return close

    def _fail_at(self, tok: Token, key: str, *args: object) -> NoReturn:
        self._fail(tok.start, tok.text, key, *args)

    def _fail(self, offset: int, near: str, key: str, *args: object) -> NoReturn:
        """Raises the syntax error of catalogue message ``key`` at ``offset``."""
        raise ClauseSyntaxError(offset, near, message(key, *args))
