"""Seeded price ticks for the streaming benchmarks, shared by every peer (stdlib only).

`generate(n_events, n_symbols, seed)` gives `n_events` ticks `(symbol, ts, price)` in time
order: symbols "S000" .. "S{n-1}", one tick per symbol per second, the k-th round of ticks
at 2024-01-01 00:00:00 + k seconds with the symbols interleaved in order within a second.
Each symbol's price is its own seeded random walk from 100.00 in steps of -3..+3 cents
(the first tick is 100.00), so a symbol's series does not depend on how many others there
are. `write_csv` writes `symbol,ts,price` lines without a header, ts as
`YYYY-MM-DD HH:MM:SS`, price with two decimals:

    python bench/streaming_events.py --events 1000000 --symbols 100 --seed 1 --out /tmp/events.csv
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

START = datetime(2024, 1, 1, 0, 0, 0)
START_CENTS = 10_000  # 100.00
MAX_STEP_CENTS = 3


def symbol_names(n_symbols: int) -> list[str]:
    """Names "S000", "S001", ...: at least three digits, more when there are over 1,000 symbols."""
    width = max(3, len(str(n_symbols - 1)))
    return [f"S{i:0{width}d}" for i in range(n_symbols)]


def generate(n_events: int, n_symbols: int, seed: int) -> list[tuple[str, datetime, float]]:
    """The first `n_events` ticks of `n_symbols` interleaved per-second random walks."""
    if n_symbols < 1:
        raise ValueError("n_symbols must be at least 1")
    names = symbol_names(n_symbols)
    # One generator per symbol, seeded from (seed, symbol number): prices in integer cents.
    rngs = [random.Random(seed * 1_000_003 + i) for i in range(n_symbols)]
    cents = [START_CENTS] * n_symbols
    events: list[tuple[str, datetime, float]] = []
    k = 0
    while len(events) < n_events:
        ts = START + timedelta(seconds=k)
        for i in range(min(n_symbols, n_events - len(events))):
            if k > 0:
                cents[i] += rngs[i].randint(-MAX_STEP_CENTS, MAX_STEP_CENTS)
            events.append((names[i], ts, round(cents[i] / 100, 2)))
        k += 1
    return events


def write_csv(events: list[tuple[str, datetime, float]], path: str | Path) -> None:
    """`symbol,ts,price` lines, no header, ts as `YYYY-MM-DD HH:MM:SS`, price as `%.2f`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="ascii", newline="") as f:
        last_ts: datetime | None = None
        ts_text = ""
        for symbol, ts, price in events:
            if ts != last_ts:  # format each second once, not each tick
                last_ts, ts_text = ts, ts.strftime("%Y-%m-%d %H:%M:%S")
            f.write(f"{symbol},{ts_text},{price:.2f}\n")


def deliver_seconds(
    ticks: list[tuple[str, datetime, float]],
    symbols: int,
    seconds: int,
    folder: Path,
    stop: threading.Event | None = None,
) -> None:
    """Live delivery for the latency runs: round k of `ticks` (one tick per symbol), stamped
    with the wall-clock second T it stands for (UTC, naive), is written to `folder` as a CSV
    file when T ends; a hidden file renamed into place, so a reader never sees half of it."""
    for k in range(seconds):
        if stop is not None and stop.is_set():
            return
        second = int(time.time()) + 1
        time.sleep(max(0.0, second - time.time()))
        stamp = datetime.fromtimestamp(second, timezone.utc).replace(tzinfo=None)
        rows = [(sym, stamp, price) for sym, _, price in ticks[k * symbols : (k + 1) * symbols]]
        time.sleep(max(0.0, second + 1 - time.time()))
        tmp = folder / f".second-{k:05d}.tmp"
        write_csv(rows, tmp)
        tmp.rename(folder / f"second-{k:05d}.csv")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--symbols", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="CSV file to write")
    a = p.parse_args(argv)
    write_csv(generate(a.events, a.symbols, a.seed), a.out)


if __name__ == "__main__":
    main()
