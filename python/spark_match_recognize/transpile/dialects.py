"""The source dialects :func:`~spark_match_recognize.transpile` reads, each with its lexical
rules (identifier and string quotes, escapes) for cutting the MATCH_RECOGNIZE clauses out."""

from __future__ import annotations

from ..lexer import SPARK_LEXICON, Lexicon

#: The source dialects :func:`transpile` reads, with the lexical rules of each.
DIALECTS: dict[str, Lexicon] = {
    "trino": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=False,
                     raw_strings=False),
    "athena": Lexicon(identifier_quotes='"`', string_quotes="'", backslash_escapes=False,
                      raw_strings=False),
    "snowflake": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=True,
                         raw_strings=False, dollar_strings=True),
    "oracle": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=False,
                      raw_strings=False),
    "databricks": SPARK_LEXICON,
    "spark": SPARK_LEXICON,
}  # fmt: skip
