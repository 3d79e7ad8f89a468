"""Flink SQL holding a large state: the peer of bench/large_state.py.

Flink SQL has no SKIP TILL ANY MATCH, so it cannot run the `any_match` query of
bench/large_state.py. The closest query it accepts that holds the same partial matches
keeps every row as the start of a match in progress with a relaxed gap:

    PATTERN (A X*? B) WITHIN INTERVAL '<minutes>' MINUTE
    DEFINE A AS A.v >= 0, B AS B.v < A.v - 1000000

No row is a `B`, so each row stays a partial match until its window has passed, as under
`any_match`; neither query has a match. The script runs it over the CSV files
bench/large_state.py wrote (`k,ts,v`, one file per micro-batch there), in a local Flink
(the PyFlink gateway's mini-cluster, streaming mode, parallelism 2, a bounded filesystem
source with a 5-second watermark, a blackhole sink), and prints one JSON line: the events,
the seconds from submitting the job to its end, events per second, and whether it finished
within `--timeout` seconds (when it did not, `events_per_second` is an upper bound: the
events over the timeout).

    .venv/bin/python bench/large_state.py --queries any_match --keys 10 --rows-per-key 2000 ...
    python3 bench/flink_large_state.py --within-minutes 2000 --timeout 600

Like bench/flink_peer.py it runs itself in bench/.flink-venv (created on first use).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DATA  # noqa: E402
from flink_peer import PARALLELISM, csv_source_ddl, in_venv, log, reexec_in_venv  # noqa: E402

SOURCE = DATA / "large-state" / "source"

QUERY = """SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts
  ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A X*? B) WITHIN INTERVAL '{minutes}' MINUTE(6)
  DEFINE A AS A.v >= 0, B AS B.v < A.v - 1000000)"""


def source_ddl(folder: Path) -> str:
    return csv_source_ddl("events", "k STRING,\n  ts_text STRING,\n  v INT", folder)


def run(args: argparse.Namespace) -> dict:
    import pyflink.version
    from pyflink.table import EnvironmentSettings, TableEnvironment

    folder = Path(args.source)
    events = sum(f.read_bytes().count(b"\n") for f in folder.glob("*.csv"))
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(PARALLELISM))
    t_env.execute_sql(source_ddl(folder))
    t_env.execute_sql(
        "CREATE TEMPORARY TABLE found (k STRING, a_ts TIMESTAMP(3), b_ts TIMESTAMP(3)) "
        "WITH ('connector' = 'blackhole')"
    )
    sql = QUERY.format(minutes=args.within_minutes)
    log(f"Flink {pyflink.version.__version__}: {events} events from {folder}\n{sql}")
    t0 = time.perf_counter()
    result = t_env.execute_sql(f"INSERT INTO found\n{sql}")
    done = threading.Event()
    threading.Thread(target=lambda: (result.wait(), done.set()), daemon=True).start()
    finished = done.wait(args.timeout)
    seconds = time.perf_counter() - t0
    if not finished:
        result.get_job_client().cancel()
        log(f"not finished after {seconds:.0f} s: cancelled")
    return {
        "system": "flink",
        "version": pyflink.version.__version__,
        "query": sql,
        "events": events,
        "finished": finished,
        "seconds": round(seconds, 2),
        "events_per_second": round(events / seconds, 1),
        "parallelism": PARALLELISM,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", default=str(SOURCE), help="the folder of k,ts,v CSV files")
    p.add_argument("--within-minutes", type=int, default=60)
    p.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args()
    if not in_venv():
        reexec_in_venv(__file__)
    print(json.dumps(run(args)), flush=True)


if __name__ == "__main__":
    main()
