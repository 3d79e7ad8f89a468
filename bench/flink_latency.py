"""Flink SQL's MATCH_RECOGNIZE end to end on live events: the latency peer of
bench/streaming.py's latency runs.

The same delivery as ours (`streaming_events.deliver_seconds`: each second's ticks, one per
symbol, stamped with the wall clock, written as a CSV file when the second ends; the same
seeded walk), read by Flink's filesystem source watching the folder (`source.monitor-interval`,
1 s by default, as our 1-second trigger) with the same 2-second watermark, parallelism 2,
streaming mode. The query is the V shape in the form Flink accepts (`flink_peer.query`,
`logical-terminated` by default); its rows are collected in this process as Flink emits
them, and each match's latency is the wall clock at its arrival minus its `end_ts` (the last
rise's event time). Prints one JSON line:

    {"system": "flink", "rate": R, "seconds": S, "matches": M, "latency_p50": ...,
     "latency_p99": ..., ...}

Run with the system python3 (the first run creates bench/.flink-venv, as flink_peer.py):

    python3 bench/flink_latency.py --rate 1000 --seconds 30
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from datetime import timezone
from pathlib import Path

from flink_peer import (
    PARALLELISM,
    flink_message,
    in_venv,
    log,
    query,
    reexec_in_venv,
    source_ddl,
)
from streaming_events import deliver_seconds, generate


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def run(args: argparse.Namespace) -> dict:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = t_env.get_config()
    conf.set("parallelism.default", str(PARALLELISM))
    # A reader of the file source with no file to read holds the watermark back otherwise.
    conf.set("table.exec.source.idle-timeout", args.idle_timeout)
    for kv in args.conf:
        k, _, v = kv.partition("=")
        conf.set(k, v)

    work = Path(tempfile.mkdtemp(prefix="flink-latency-"))
    source = work / "ticks"
    source.mkdir()
    t_env.execute_sql(source_ddl(source, args.watermark, args.monitor))
    sql = query(args.form, args.within, args.within_unit)
    try:
        t_env.explain_sql(sql)
    except Exception as e:  # py4j wraps Flink's exception
        raise SystemExit(f"Flink refused the {args.form} form: {flink_message(e)}") from e

    ticks = generate(args.rate * (args.seconds + 1), args.rate, seed=args.rate)
    delays: list[float] = []
    result = t_env.execute_sql(sql)
    end_column = result.get_table_schema().get_field_names().index("end_ts")

    def collect() -> None:
        with result.collect() as rows:
            for row in rows:
                now = time.time()
                end = row[end_column].replace(tzinfo=timezone.utc).timestamp()
                delays.append(now - end)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    time.sleep(args.start_seconds)  # the job's mini-cluster and first monitoring round
    log(f"delivering {args.rate} events/s for {args.seconds} s")
    deliver_seconds(ticks, args.rate, args.seconds, source)
    time.sleep(args.drain_seconds)  # the last seconds' matches
    matches = len(delays)
    result.get_job_client().cancel().result()
    shutil.rmtree(work, ignore_errors=True)
    return {
        "system": "flink",
        "query": "flink_form",
        "form": args.form,
        "rate": args.rate,
        "seconds": args.seconds,
        "matches": matches,
        "latency_p50": percentile(delays, 0.50),
        "latency_p99": percentile(delays, 0.99),
        "watermark_seconds": args.watermark,
        "monitor_interval": args.monitor,
        "parallelism": PARALLELISM,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=int, default=1000, help="events per second (= symbols)")
    p.add_argument("--seconds", type=int, default=30, help="seconds of delivery")
    p.add_argument("--watermark", type=int, default=2, help="watermark delay in seconds")
    p.add_argument("--monitor", default="1 s", help="the source's folder monitoring interval")
    p.add_argument("--idle-timeout", default="1 s", help="table.exec.source.idle-timeout")
    p.add_argument("--form", default="logical-terminated")
    p.add_argument("--within", default="1")
    p.add_argument("--within-unit", default="MINUTE")
    p.add_argument("--start-seconds", type=float, default=8.0)
    p.add_argument("--drain-seconds", type=float, default=8.0)
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Flink option")
    args = p.parse_args(argv)
    if not in_venv():
        reexec_in_venv(__file__)  # does not return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(json.dumps(run(args)), flush=True)


if __name__ == "__main__":
    main()
