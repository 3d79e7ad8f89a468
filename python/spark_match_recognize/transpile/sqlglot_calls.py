"""The calls into sqlglot: reading text of the source dialect, writing Spark SQL, and turning
sqlglot's errors (and its absence) into :class:`~.errors.TranspileError`."""

from __future__ import annotations

from typing import Any

from .errors import Translation
from .rewrites import adapt_for_spark


def require_sqlglot() -> None:
    try:
        import sqlglot  # noqa: F401
    except ImportError:
        raise ImportError(
            "transpile() needs sqlglot: pip install 'spark-match-recognize[transpile]' "
            "(or pip install 'sqlglot>=30.30,<31')"
        ) from None


def transpile_with_sqlglot(ctx: Translation, text: str, what: str) -> list[str]:
    import sqlglot
    from sqlglot.errors import ErrorLevel, ParseError, UnsupportedError

    try:
        trees = sqlglot.parse(text, read=ctx.read)
    except ParseError as e:
        reason = f"sqlglot cannot parse it as {ctx.read} SQL: {_first_error(e)}"
        raise ctx.error(what, reason) from None
    out = []
    for tree in trees:
        if tree is None:
            continue
        tree = adapt_for_spark(ctx, tree)
        try:
            out.append(tree.sql("spark", pretty=ctx.pretty, unsupported_level=ErrorLevel.RAISE))
        except UnsupportedError as e:
            raise ctx.error(what, f"it has no Spark equivalent ({_first_error(e)})") from None
    return out


def _first_error(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if errors:
        first = errors[0]
        description = first.get("description") if isinstance(first, dict) else None
        if description:
            return str(description)
    return str(e).split("\n")[0]


def parse_source(ctx: Translation, text: str, construct: str, offset: int) -> Any:
    import sqlglot
    from sqlglot.errors import ParseError

    try:
        return sqlglot.parse_one(text, read=ctx.read)
    except ParseError as e:
        raise ctx.error(
            construct, f"sqlglot cannot parse it as {ctx.read} SQL: {_first_error(e)}", offset
        ) from None


def write_spark(ctx: Translation, tree: Any, construct: str, offset: int) -> str:
    from sqlglot.errors import ErrorLevel, UnsupportedError

    tree = adapt_for_spark(ctx, tree)
    try:
        return tree.sql("spark", unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as e:
        reason = f"it has no Spark equivalent ({_first_error(e)})"
        raise ctx.error(construct, reason, offset) from None
