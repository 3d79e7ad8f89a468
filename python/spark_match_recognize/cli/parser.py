"""The argument parser of the command line: its help texts and the options of each
command."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import __version__
from ..config import EXTENSIONS_CLASS
from ..jars import JAR_ENV_VAR, SPARK_LINES, scala_versions
from ..transpile import DIALECTS
from .session_options import session_options_parser

PROG = "python -m spark_match_recognize"

_DESCRIPTION = f"""\
SQL:2016 MATCH_RECOGNIZE for Apache Spark SQL (spark-match-recognize {__version__}).

commands:
  demo       run the example scripts (sql-examples/*.sql) in a local Spark session
  sql        run SQL statements, from the command line or a file, and print their results
  jar        print the path of the jar, e.g. for spark-sql --jars or spark-submit --jars
  check      find mistakes in MATCH_RECOGNIZE clauses without starting Spark
  transpile  rewrite a Trino/Snowflake/Oracle/Databricks/Athena query for Spark
  docs       print (or --write) the table of spark.sql.matchRecognize.* settings

Sessions run locally (--master local[2]) in UTC, without web UI, and log only errors.
Run '{PROG} <command> --help' for the options of a command.
"""

_EPILOG = f"""\
examples:
  {PROG} demo
  {PROG} sql "SELECT * FROM t MATCH_RECOGNIZE (...)"
  {PROG} sql -f sql-examples/v_shape.sql --max-live-threads 10000
  spark-sql --jars "$({PROG} jar)" --conf spark.sql.extensions={EXTENSIONS_CLASS}
  {PROG} check query.sql
  {PROG} transpile --read snowflake query.sql > spark_query.sql
  cat query.sql | {PROG} transpile --read trino -
  {PROG} docs --write

There is a jar per Spark line ({", ".join(SPARK_LINES)}; Spark 3.5 has one for Scala 2.12 and
one for 2.13). The one for the installed pyspark is taken from ${JAR_ENV_VAR} if set, else
from the installed package, else from target/ of a source checkout (built by
./dev/sbt package); `{PROG} jar --spark 4.1` prints the one for another line, and
`{PROG} jar --spark 3.5 --scala 2.13` the Scala 2.13 build of 3.5.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="{demo,sql,jar,check,transpile,docs}", required=True
    )
    session = session_options_parser()

    demo = commands.add_parser(
        "demo",
        parents=[session],
        help="run the example scripts and print their results",
        description="Run every *.sql file of the examples directory in a local Spark "
        "session, printing each file's name, the one-line description from its leading "
        "comment, and the rows its statements return.",
    )
    demo.add_argument(
        "--examples",
        metavar="DIR",
        type=Path,
        help="directory of *.sql scripts (default: the examples bundled with the package, "
        "or sql-examples/ in a source checkout)",
    )

    sql = commands.add_parser(
        "sql",
        parents=[session],
        help="run SQL statements and print their results",
        description="Run SQL statements in a local Spark session with MATCH_RECOGNIZE and "
        "print the rows of each statement that returns columns. Statements are separated "
        "by ';' (semicolons inside quotes and comments do not count). On a Spark error the "
        "command prints the error and exits with status 1.",
    )
    source = sql.add_mutually_exclusive_group(required=True)
    source.add_argument("query", nargs="?", help="the SQL text to run")
    source.add_argument(
        "-f", "--file", type=Path, metavar="FILE", help="run the statements of FILE"
    )

    jar = commands.add_parser(
        "jar",
        help="print the path of the spark-match-recognize jar",
        description=f"Print the path of the jar for the installed pyspark's Spark line (or "
        f"--spark LINE): ${JAR_ENV_VAR} if set, else the jar bundled with the package, else "
        "target/ of a source checkout.",
    )
    jar.add_argument(
        "--spark",
        choices=SPARK_LINES,
        metavar="LINE",
        help="the jar for this Spark line (one of {}) instead of the installed "
        "pyspark's, e.g. for a cluster's spark-submit".format(", ".join(SPARK_LINES)),
    )
    jar.add_argument(
        "--scala",
        choices=sorted({v for line in SPARK_LINES for v in scala_versions(line)}),
        metavar="VERSION",
        help="the jar for this Scala binary version, for a line built for several "
        "(Spark 3.5: 2.12, the default, or 2.13)",
    )
    jar.add_argument(
        "--info",
        action="store_true",
        help="also print the versions recorded in the jar (one key=value per line)",
    )

    check = commands.add_parser(
        "check",
        help="find mistakes in MATCH_RECOGNIZE clauses without starting Spark",
        description="Check the MATCH_RECOGNIZE clauses of SQL statements without a JVM: "
        "syntax errors with line and column, and the analysis errors that need no catalog "
        "(unknown pattern variables, bad SUBSETs, clauses that cannot be combined, ...), "
        "with the error conditions and messages Spark gives. Exits with status 1 if there "
        "is a problem. Unknown tables, columns and types are left to Spark.",
    )
    check_source = check.add_mutually_exclusive_group(required=True)
    check_source.add_argument(
        "file", nargs="?", metavar="FILE", help="a SQL file ('-' reads standard input)"
    )
    check_source.add_argument("-e", "--sql", metavar="SQL", help="the SQL text to check")

    transpile = commands.add_parser(
        "transpile",
        help="rewrite a MATCH_RECOGNIZE query of another SQL dialect for Spark",
        description="Rewrite SQL written for another engine as Spark SQL for "
        "spark-match-recognize: sqlglot translates the SQL around the clauses, and each "
        "MATCH_RECOGNIZE clause is carried over part by part. Prints the result; a "
        "construct without a Spark equivalent is reported (exit status 1).",
    )
    transpile.add_argument(
        "--read",
        required=True,
        choices=sorted(d for d in DIALECTS if d != "spark"),
        type=str.lower,
        help="the dialect the query is written in",
    )
    transpile.add_argument(
        "--one-line", action="store_true", help="print each statement on one line"
    )
    transpile.add_argument(
        "file", metavar="FILE", help="the SQL file to translate ('-' reads standard input)"
    )

    docs = commands.add_parser(
        "docs",
        parents=[session],
        help="print or update the table of spark.sql.matchRecognize.* settings",
        description="Print the Markdown table of every spark.sql.matchRecognize.* setting, "
        "generated by the jar (ConfDoc), or write it into docs/configuration.md between its "
        "marker comments, together with the table of configure() options. Starts a local "
        "Spark session.",
    )
    docs_mode = docs.add_mutually_exclusive_group()
    docs_mode.add_argument(
        "--write", action="store_true", help="update the table in docs/configuration.md"
    )
    docs_mode.add_argument(
        "--check",
        action="store_true",
        help="exit with status 1 if the tables in docs/configuration.md are out of date",
    )
    docs.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help="the Markdown file (default: docs/configuration.md of the source checkout)",
    )
    return parser
