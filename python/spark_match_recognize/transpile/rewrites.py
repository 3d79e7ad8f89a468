"""Rewrites of sqlglot's trees where its Spark output would change the meaning or not run:
date arithmetic with a unit, date formats, Oracle's ``TIMESTAMP`` literals and ``DUAL``."""

from __future__ import annotations

import re
from typing import Any

from .errors import Translation


def adapt_for_spark(ctx: Translation, tree: Any) -> Any:
    """Rewrites where sqlglot's Spark output would change the meaning or not run."""
    from sqlglot import exp
    from sqlglot.dialects.dialect import Dialect

    def fix(node: Any) -> Any:
        # date_add('minute', 5, ts), DATEADD(minute, 5, ts), TIMESTAMPADD(...): sqlglot
        # writes Spark's DATE_ADD(ts, 5), which adds days. Interval arithmetic keeps the
        # unit, and the type (DATE + days stays a DATE, TIMESTAMP stays a TIMESTAMP).
        adds = (exp.DateAdd, exp.TsOrDsAdd, exp.TimestampAdd, exp.DatetimeAdd)
        subs = (exp.DateSub, exp.TimestampSub, exp.DatetimeSub)
        if isinstance(node, adds + subs) and node.args.get("unit") is not None:
            unit = node.args["unit"]
            unit_name = unit.name.upper() if isinstance(unit, (exp.Var, exp.Literal)) else ""
            unit_name = unit_name.strip("'\"")
            interval = _interval(node.expression, unit_name)
            if interval is not None:
                op = exp.Sub if isinstance(node, subs) else exp.Add
                return op(this=node.this.copy(), expression=interval)
        # TO_CHAR(ts, 'YYYY-MM-DD'): a date format becomes DATE_FORMAT with Spark's letters.
        if isinstance(node, exp.ToChar) and isinstance(node.args.get("format"), exp.Literal):
            fmt = node.args["format"].name
            if re.search(r"YY|MM|DD|HH|MI|SS", fmt, re.IGNORECASE):
                converted = Dialect.get_or_raise(ctx.read).format_time(exp.Literal.string(fmt))
                return exp.TimeToStr(this=node.this.copy(), format=converted)
        # Oracle's TIMESTAMP '...' literal: sqlglot writes TO_TIMESTAMP(s, <format with
        # fractional seconds>), which Spark cannot apply to text without them.
        if (
            isinstance(node, exp.StrToTime)
            and ctx.read == "oracle"
            and isinstance(node.this, exp.Literal)
            and node.this.is_string
            and isinstance(node.args.get("format"), exp.Literal)
            and node.args["format"].name == "%Y-%m-%d %H:%M:%S.%f"
        ):
            return exp.Cast(this=node.this.copy(), to=exp.DataType.build("TIMESTAMP"))
        # Oracle's one-row table DUAL does not exist in Spark.
        if isinstance(node, exp.Select) and ctx.read == "oracle":
            source = node.args.get("from") or node.args.get("from_")
            table = source.this if source is not None else None
            if (
                isinstance(table, exp.Table)
                and table.name.upper() == "DUAL"
                and not table.args.get("db")
                and not node.args.get("joins")
            ):
                node.set("from" if node.args.get("from") is not None else "from_", None)
        return node

    return tree.transform(fix)


_INTERVAL_UNITS = {
    "YEAR": ("1", "YEAR"), "YEARS": ("1", "YEAR"), "YY": ("1", "YEAR"), "YYYY": ("1", "YEAR"),
    "QUARTER": ("3", "MONTH"), "QUARTERS": ("3", "MONTH"), "QQ": ("3", "MONTH"),
    "MONTH": ("1", "MONTH"), "MONTHS": ("1", "MONTH"), "MM": ("1", "MONTH"), "MON": ("1", "MONTH"),
    "WEEK": ("7", "DAY"), "WEEKS": ("7", "DAY"), "WK": ("7", "DAY"),
    "DAY": ("1", "DAY"), "DAYS": ("1", "DAY"), "DD": ("1", "DAY"), "D": ("1", "DAY"),
    "HOUR": ("1", "HOUR"), "HOURS": ("1", "HOUR"), "HH": ("1", "HOUR"),
    "MINUTE": ("1", "MINUTE"), "MINUTES": ("1", "MINUTE"), "MI": ("1", "MINUTE"),
    "SECOND": ("1", "SECOND"), "SECONDS": ("1", "SECOND"), "SS": ("1", "SECOND"),
    "MILLISECOND": ("0.001", "SECOND"), "MILLISECONDS": ("0.001", "SECOND"),
    "MS": ("0.001", "SECOND"),
    "MICROSECOND": ("0.000001", "SECOND"), "MICROSECONDS": ("0.000001", "SECOND"),
    "US": ("0.000001", "SECOND"),
}  # fmt: skip


def _interval(amount: Any, unit: str) -> Any:
    from sqlglot import exp

    spec = _INTERVAL_UNITS.get(unit)
    if spec is None:
        return None
    step, spark_unit = spec
    if isinstance(amount, exp.Literal) and not amount.is_string and step == "1":
        return exp.Interval(this=exp.Literal.string(amount.name), unit=exp.var(spark_unit))
    one = exp.Interval(this=exp.Literal.string(step), unit=exp.var(spark_unit))
    return exp.Mul(this=exp.Paren(this=amount.copy()), expression=one)
