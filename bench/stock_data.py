"""A seeded stock-tick generator calibrated to the JQPG paper's NASDAQ stream.

The paper's data is not available. Like it, this stream has about 2,100 symbols; each
symbol's expected number of events per window (20 minutes) is drawn from 1-45, events are
spread uniformly over a fixed duration, and each event carries a price and a price
difference. Everything is derived from hashes of (seed, symbol, event number), so the data
is the same on every run. Times use the 64-bit xxhash64: the 32-bit hash would cover
only about 36 minutes of microseconds. Written as Parquet once per (events, seed) and reused.
"""

from __future__ import annotations

SYMBOLS = 2100
WINDOW_MINUTES = 20
START = 1767225600  # 2026-01-01T00:00:00Z, seconds


def rates_sql(seed: int) -> str:
    """Symbols with their expected events per window (1.0 .. 45.0)."""
    return f"""
        SELECT id AS sym_id,
               concat('S', lpad(CAST(id AS STRING), 4, '0')) AS sym,
               1 + pmod(hash({seed}, id), 4401) / 100.0 AS per_window
        FROM range({SYMBOLS})"""


def events_sql(events: int, seed: int) -> str:
    """About `events` ticks: each symbol gets its share of the events by its rate, at
    uniformly drawn times over a duration chosen so that the rates hold per window."""
    return f"""
        WITH rates AS ({rates_sql(seed)}),
        totals AS (SELECT sum(per_window) AS total FROM rates),
        plan AS (
          SELECT r.sym, r.sym_id, r.per_window,
                 CAST(round({events} * r.per_window / t.total) AS INT) AS n,
                 CAST(({events} / t.total) * {WINDOW_MINUTES} * 60 * 1000000 AS BIGINT) AS span_us
          FROM rates r CROSS JOIN totals t)
        SELECT sym,
               TIMESTAMP_MICROS(
                   CAST({START} AS BIGINT) * 1000000
                   + pmod(xxhash64({seed}, sym_id, k, 1), span_us)) AS ts,
               CAST(50 + pmod(hash({seed}, sym_id, k, 2), 10000) / 100.0 AS DOUBLE) AS price,
               CAST((pmod(hash({seed}, sym_id, k, 3), 2001) - 1000) / 100.0 AS DOUBLE) AS diff
        FROM plan LATERAL VIEW explode(sequence(1, greatest(n, 1))) e AS k
        WHERE n > 0"""


def symbols_by_rate(spark, seed: int, low: float, high: float, count: int) -> list[str]:
    """`count` symbols whose rate per window lies in [low, high], deterministically."""
    rows = spark.sql(
        f"SELECT sym FROM ({rates_sql(seed)}) WHERE per_window BETWEEN {low} AND {high} "
        f"ORDER BY pmod(hash({seed}, sym_id, 99), 1000003) LIMIT {count}"
    ).collect()
    return [r[0] for r in rows]
