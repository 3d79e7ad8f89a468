"""What ``docs`` generates: the tables of ``docs/configuration.md`` (the
spark.sql.matchRecognize.* settings, from the jar, and the ``configure()`` options), the
marker comments that delimit them, and the package's ``settings.json`` (from the jar), which
the options are read from."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..options import OPTIONS, Option

#: The marker comments around the generated tables in docs/configuration.md.
CONF_TABLE_BEGIN = "<!-- BEGIN GENERATED CONF TABLE (python -m spark_match_recognize docs) -->"
OPTIONS_TABLE_BEGIN = (
    "<!-- BEGIN GENERATED OPTIONS TABLE (python -m spark_match_recognize docs) -->"
)


def _end_marker(begin: str) -> str:
    kind = "CONF" if "CONF TABLE" in begin else "OPTIONS"
    return f"<!-- END GENERATED {kind} TABLE -->"


def conf_table(spark: Any) -> str:
    """The Markdown table of the spark.sql.matchRecognize.* settings, from the jar."""
    return str(spark._jvm.org.apache.spark.sql.matchrecognize.conf.ConfDoc.markdown()).strip()


def settings_file(spark: Any) -> str:
    """The text of the package's settings.json: the settings the jar lists (ConfDoc.json)."""
    text = str(spark._jvm.org.apache.spark.sql.matchrecognize.conf.ConfDoc.json())
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def options_table(options: Mapping[str, Option] = OPTIONS) -> str:
    """The Markdown table of configure()'s options (by default OPTIONS)."""
    rows = ["| option | key | values |", "| --- | --- | --- |"]
    rows += [f"| `{o.name}` | `{o.key}` | {o.accepts} |" for o in options.values()]
    return "\n".join(rows)


def documented_table(text: str, begin: str) -> str | None:
    """The table between the marker comments starting with ``begin``, or None."""
    start = text.find(begin)
    end = text.find(_end_marker(begin), start)
    if start < 0 or end < 0:
        return None
    return text[start + len(begin) : end].strip()


def with_table(text: str, begin: str, table: str) -> str:
    """``text`` with the table between the marker comments replaced by ``table``."""
    start = text.find(begin)
    end = text.find(_end_marker(begin), start)
    if start < 0 or end < 0:
        raise ValueError(f"the marker comments {begin} ... {_end_marker(begin)} are missing")
    return f"{text[: start + len(begin)]}\n{table.strip()}\n{text[end:]}"
