"""Flink SQL's MATCH_RECOGNIZE as a benchmark peer of the streaming extension.

Runs the V-shape query over a `symbol,ts,price` CSV file (bench/streaming_events.py) in a
local Flink (no cluster: the mini-cluster of the PyFlink gateway), streaming mode,
parallelism 2, and prints one JSON line:

    {"system": "flink", "version": ..., "events": N, "matches": M, "seconds": S,
     "events_per_second": N/S, "query": ..., "form": ..., "parallelism": 2, ...}

`seconds` is the wall time from submitting the INSERT to the job's end (the median of
`--runs`), so it leaves out creating the virtual environment (`setup_seconds`, null when
it was reused) and starting the JVM gateway and the table environment (`startup_seconds`).
Every job of a local PyFlink starts its own mini-cluster: two trivial one-row jobs run
first, the first of which loads the planner's and the runtime's classes (`warmup_seconds`);
the second's time (`fixed_job_seconds`) is the per-job start-up included in `seconds`.

Source: the filesystem connector, format csv, over the file (bounded), with the event time
a computed column `ts AS TO_TIMESTAMP(ts_text)` and `WATERMARK FOR ts AS ts - INTERVAL '5'
SECOND`. Sink: the filesystem connector, format csv, in a temporary folder; its files are
read afterwards to count the matches (and, with `--matches-out`, to write them sorted as
`symbol,start_ts,bottom_ts,end_ts`).

Run it with the system python3: on first use it creates bench/.flink-venv (python3 -m venv,
pip install apache-flink==FLINK_VERSION) and then re-executes itself inside it:

    python3 bench/streaming_events.py --events 1000000 --symbols 100 --seed 1 --out /tmp/events.csv
    python3 bench/flink_peer.py /tmp/events.csv --matches-out /tmp/flink-matches.csv

Flink (2.3.0) refuses the query as written for the extension twice over, so `--form auto`
(the default) tries the forms in order, reports each refusal's message in `refused`, and runs
the first one that Flink accepts (`form`, `query`):

- `standard`, the query as written: "Flink does not support physical offsets within
  partition." (PREV; Flink has only logical offsets, LAST(var.col, n)).
- `logical`, PREV rewritten as logical offsets that compare the same rows, since variables
  are contiguous (`DOWN.price < COALESCE(LAST(DOWN.price, 1), STRT.price)`, `UP.price >
  COALESCE(LAST(UP.price, 1), LAST(DOWN.price))`): "Greedy quantifiers are not allowed as
  the last element of a Pattern yet. Finish your pattern with either a simple variable or
  reluctant quantifier." (with the WITHIN clause, as here).
- `logical-terminated`, accepted: `PATTERN (STRT DOWN+ UP+ N)` with `N AS N.price <=
  LAST(UP.price)` and `AFTER MATCH SKIP TO LAST N`, so that the next match may start at the
  row that ended the rise, as after `SKIP PAST LAST ROW` in the standard form. Its matches
  equal the standard form's except where a rise runs into the end of the data or of the
  WITHIN window: with no row N in time there is no match.

Flink's WITHIN is exclusive (last - first < interval; the extension's is inclusive), and here
it covers N too. `--form` runs one form (also `logical-terminated-skip-past` and
`logical-reluctant`, whose end_ts is the first rise's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLINK_VERSION = os.environ.get("FLINK_PEER_VERSION", "2.3.0")
HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("FLINK_PEER_VENV", HERE / ".flink-venv")).resolve()
VENV_PYTHON = VENV / "bin" / "python"
MARKER = VENV / f".apache-flink-{FLINK_VERSION}.installed"
SETUP_ENV = "FLINK_PEER_SETUP_SECONDS"
PARALLELISM = 2

QUERY_TEMPLATE = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
  ONE ROW PER MATCH {skip}
  PATTERN ({pattern}) WITHIN INTERVAL '{within}' {unit}
  DEFINE {define})"""

# Flink refuses PREV (a physical offset); within a match of STRT DOWN+ UP+ (N) the row
# before a DOWN row is the previous DOWN row or STRT, the row before an UP row the previous
# UP row or the last DOWN row, and the row before N the last UP row: the logical offsets
# below compare each row with the same row as PREV does.
PREV_DEFINE = "DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)"
LOGICAL_DEFINE = (
    "DOWN AS DOWN.price < COALESCE(LAST(DOWN.price, 1), STRT.price),\n"
    "         UP AS UP.price > COALESCE(LAST(UP.price, 1), LAST(DOWN.price))"
)
SKIP_PAST = "AFTER MATCH SKIP PAST LAST ROW"

# name -> (AFTER MATCH ..., PATTERN, DEFINE); `auto` tries them in this order.
FORMS = {
    # the query as written for the extension (and Trino, Oracle)
    "standard": (SKIP_PAST, "STRT DOWN+ UP+", PREV_DEFINE),
    # PREV as logical offsets
    "logical": (SKIP_PAST, "STRT DOWN+ UP+", LOGICAL_DEFINE),
    # and the greedy UP+ ended by a row that is no rise; the next match may start at it,
    # as it may after SKIP PAST LAST ROW in the standard form
    "logical-terminated": (
        "AFTER MATCH SKIP TO LAST N",
        "STRT DOWN+ UP+ N",
        LOGICAL_DEFINE + ",\n         N AS N.price <= LAST(UP.price)",
    ),
    # the same, the next match starting after N
    "logical-terminated-skip-past": (
        SKIP_PAST,
        "STRT DOWN+ UP+ N",
        LOGICAL_DEFINE + ",\n         N AS N.price <= LAST(UP.price)",
    ),
    # a reluctant UP+?: the match ends at the first rise (end_ts differs)
    "logical-reluctant": (SKIP_PAST, "STRT DOWN+ UP+?", LOGICAL_DEFINE),
}
AUTO = ["standard", "logical", "logical-terminated"]


def query(form: str, within: str = "1", unit: str = "MINUTE") -> str:
    skip, pattern, define = FORMS[form]
    return QUERY_TEMPLATE.format(
        skip=skip, pattern=pattern, within=within, unit=unit, define=define
    )


def log(msg: str) -> None:
    print(f"[flink_peer] {msg}", file=sys.stderr, flush=True)


# --- the virtual environment -------------------------------------------------------------


def in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV


def ensure_venv() -> float | None:
    """Creates the venv with apache-flink unless it is there; the seconds it took, or None."""
    if MARKER.exists():
        return None
    log(f"creating {VENV} with apache-flink=={FLINK_VERSION} (once; takes minutes)")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [str(VENV_PYTHON), "-m", "pip", "install", "--disable-pip-version-check",
         f"apache-flink=={FLINK_VERSION}"],
        check=True,
        stdout=sys.stderr,  # keep stdout for the JSON line
    )  # fmt: skip
    MARKER.write_text(f"apache-flink=={FLINK_VERSION}\n")
    seconds = time.perf_counter() - t0
    log(f"venv ready in {seconds:.1f} s")
    return seconds


def reexec_in_venv(script: str = __file__) -> None:
    """Runs `script` (this file by default) again, with the same arguments, in the venv."""
    seconds = ensure_venv()
    env = dict(os.environ)
    env[SETUP_ENV] = "" if seconds is None else f"{seconds:.3f}"
    script = str(Path(script).resolve())
    os.execve(str(VENV_PYTHON), [str(VENV_PYTHON), script, *sys.argv[1:]], env)


# --- inside the venv ---------------------------------------------------------------------


def count_lines(path: Path) -> int:
    n = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
    return n


def sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def csv_source_ddl(
    table: str, columns: str, path: Path, watermark: int = 5, monitor: str | None = None
) -> str:
    """A table over a csv file or folder whose rows carry `ts_text`, with `ts` parsed from it
    and a watermark `watermark` seconds behind; `columns` are the others, before `ts_text`.
    With `monitor`, the folder is watched for new files at that interval (unbounded)."""
    watch = f",\n  'source.monitor-interval' = '{monitor}'" if monitor else ""
    return f"""CREATE TEMPORARY TABLE {table} (
  {columns},
  ts AS TO_TIMESTAMP(ts_text),
  WATERMARK FOR ts AS ts - INTERVAL '{watermark}' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = {sql_string(path.resolve().as_uri())},
  'format' = 'csv'{watch}
)"""


def source_ddl(path: Path, watermark: int = 5, monitor: str | None = None) -> str:
    """The `ticks` table over a csv file or folder (see `csv_source_ddl`)."""
    return csv_source_ddl(
        "ticks", "symbol STRING,\n  ts_text STRING,\n  price DOUBLE", path, watermark, monitor
    )


def sink_ddl(name: str, folder: Path) -> str:
    return f"""CREATE TEMPORARY TABLE {name} (
  symbol STRING,
  start_ts TIMESTAMP(3),
  bottom_ts TIMESTAMP(3),
  end_ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = {sql_string(folder.resolve().as_uri())},
  'format' = 'csv'
)"""


def read_matches(folder: Path) -> tuple[list[tuple[str, ...]], list[str]]:
    """The rows of the sink's finished files, and the names of any unfinished ones."""
    rows: list[tuple[str, ...]] = []
    unfinished: list[str] = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        if f.name.startswith((".", "_")):
            unfinished.append(f.name)
            continue
        for line in f.read_text().splitlines():
            if line:
                rows.append(tuple(norm_ts(v) for v in line.split(",")))
    return rows, unfinished


def norm_ts(v: str) -> str:
    """Flink's csv writes TIMESTAMP(3) as `2024-01-01 00:00:05` or with `.000`; the inputs'
    form is whole seconds."""
    v = v.strip().strip('"')
    if len(v) > 19 and v[4] == "-" and v[19] == "." and v[20:].strip("0") == "":
        return v[:19]
    return v


def run(args: argparse.Namespace) -> dict:
    setup = os.environ.get(SETUP_ENV, "")
    csv = Path(args.csv)
    events = count_lines(csv)

    t0 = time.perf_counter()
    import pyflink.version
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = t_env.get_config()
    conf.set("parallelism.default", str(PARALLELISM))
    for kv in args.conf:
        k, _, v = kv.partition("=")
        conf.set(k, v)
    startup = time.perf_counter() - t0
    version = pyflink.version.__version__
    log(f"Flink {version}: gateway and table environment in {startup:.1f} s")

    t_env.execute_sql(source_ddl(csv))

    trivial: list[float] = []
    if not args.no_warmup:
        t_env.execute_sql(
            "CREATE TEMPORARY TABLE warmup_sink (x INT) WITH ('connector' = 'blackhole')"
        )
        for _ in range(2):
            t1 = time.perf_counter()
            t_env.execute_sql("INSERT INTO warmup_sink VALUES (1)").wait()
            trivial.append(time.perf_counter() - t1)
        log(f"trivial jobs: {trivial[0]:.1f} s (cold), {trivial[1]:.1f} s")

    forms = AUTO if args.form == "auto" else [args.form]
    refused: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="flink-peer-"))
    times: list[float] = []
    rows: list[tuple[str, ...]] = []
    form = sql = ""
    try:
        for form in forms:
            sql = query(form, args.within, args.within_unit)
            try:
                t_env.explain_sql(sql)  # plans the query: refusals show here, untimed
            except Exception as e:  # py4j / pyflink wrap Flink's exceptions
                refused[form] = flink_message(e)
                log(f"Flink refused the {form} form: {refused[form]}")
                continue
            break
        else:
            raise SystemExit("Flink refused every form: " + json.dumps(refused, indent=2))
        log(f"running the {form} form:\n{sql}")
        for i in range(args.runs):
            out = work / f"run{i}"
            t_env.execute_sql(sink_ddl(f"matches_{i}", out))
            t1 = time.perf_counter()
            t_env.execute_sql(f"INSERT INTO matches_{i}\n{sql}").wait()
            times.append(time.perf_counter() - t1)
            rows, unfinished = read_matches(out)
            if unfinished:
                log(f"unfinished sink files (not counted): {unfinished[:5]}")
            log(f"run {i + 1}/{args.runs}: {times[-1]:.2f} s, {len(rows)} matches")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows.sort()
    if args.matches_out:
        Path(args.matches_out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.matches_out, "w", encoding="ascii") as f:
            f.writelines(",".join(r) + "\n" for r in rows)
    seconds = statistics.median(times)
    return {
        "system": "flink",
        "version": version,
        "events": events,
        "matches": len(rows),
        "seconds": round(seconds, 3),
        "events_per_second": round(events / seconds, 1),
        "query": sql,
        "form": form,
        "refused": refused,
        "parallelism": PARALLELISM,
        "mode": "streaming",
        "runs": [round(t, 3) for t in times],
        "warmup_seconds": round(trivial[0], 3) if trivial else None,
        "fixed_job_seconds": round(trivial[1], 3) if trivial else None,
        "startup_seconds": round(startup, 3),
        "setup_seconds": float(setup) if setup else None,
        "input": str(csv),
    }


def flink_message(e: Exception) -> str:
    """The innermost Flink message of a wrapped Java exception, on one line."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    causes = [ln for ln in lines if ln.startswith(("org.apache.flink", "Caused by"))]
    picked = causes[-1] if causes else (lines[0] if lines else repr(e))
    return picked.removeprefix("Caused by: ")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", nargs="?", help="symbol,ts,price file from bench/streaming_events.py")
    p.add_argument("--matches-out", help="write the matches here, sorted")
    p.add_argument("--form", choices=["auto", *FORMS], default="auto")
    p.add_argument("--runs", type=int, default=1, help="timed runs; `seconds` is the median")
    p.add_argument("--within", default="1", help="the WITHIN interval's number")
    p.add_argument("--within-unit", default="MINUTE")
    p.add_argument("--no-warmup", action="store_true", help="skip the two trivial first jobs")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Flink option")
    p.add_argument("--print-query", action="store_true", help="print the query and stop")
    args = p.parse_args(argv)
    if args.print_query:
        print(query("standard" if args.form == "auto" else args.form, args.within))
        return
    if not args.csv:
        p.error("the csv file is required")
    if not in_venv():
        reexec_in_venv()  # does not return
    print(json.dumps(run(args)), flush=True)


if __name__ == "__main__":
    main()
