"""SKIP TILL ANY MATCH against Esper, a single-threaded CEP engine, on stock-style patterns.

The shapes are the stock patterns of OpenCEP (sequence, conjunction, negation, Kleene
closure; every combination of events, within a window) over a NASDAQ-like minute-tick
stream: 100 symbols S000-S099, symbol s trading in a given minute with a fixed probability
(0.1-1.0, seeded), 165,000 events by default, each with a price (uniform 50.00-150.00). A
symbol's tick lies at a fixed millisecond offset of its minute (250 + 577 s ms), so no two
events share a timestamp (a sequence binds strictly increasing times here and arrival order
in Esper: they agree) and no two events of different symbols lie exactly one window apart
(the window's inclusive bound here and Esper's timer cannot differ). Window: 20 minutes.

  seq    PATTERN (A B C D), D.price > A.price               4 symbols, ~10 events per window
  conj   PATTERN (PERMUTE(A, B, C, D)), D.price > A.price   4 symbols, ~5 events per window
  neg    PATTERN (A B !N C), C.price > A.price              A B C ~10, N ~6 per window
  kleene PATTERN (A B+ C), C.price > A.price                ~5 per window each

Our side: MATCH_RECOGNIZE ... SKIP TILL ANY MATCH ... WITHIN INTERVAL '20' MINUTE over the
events cached in memory, into the noop sink, local[--cores]; each shape's figure is the
median of `--runs` interleaved rounds after a warm-up (common.timed_rounds), its match
count observed in a run of its own. Esper's side (bench/esper_peer.py, EPL in
bench/esper_peer/EsperShapes.java): the same events from memory into one runtime from one
thread, event time, the median of `--runs` runs after a warm-up. Seconds exclude reading
the input into memory on both sides; ours include planning and Spark's task scheduling.

Esper's EPL for the shapes (W the window; its sub-pattern lives W + 1 ms and the last
event's filter checks `ts <= a.ts + W`, so the bound is inclusive like ours):

  seq    every a=A -> (every b=B -> every c=C -> every d=D(...)) where timer:within
  conj   four statements, one per symbol that comes first: every a=A -> (every b=B and
         every c=C and every d=D) where timer:within, filtered by `select ... where`
  neg    every a=A -> (every b=B -> (every c=C(...) and not N)) where timer:within

Kleene closure has no Esper form of the same semantics: B+ here binds every non-empty
subset of the B rows between A and C (the power set); Esper's repetition (`[1:] b=B until
c=C`) collects the B events into one match and does not enumerate subsets. Its Esper
columns are `n/a` and only our side is timed.

The match counts of both engines must be equal on every shape Esper runs, or the run fails.
`--verify-small` runs each shape on a small stream (`--small-events`) through both engines
and a brute-force Python enumeration, and fails unless all three counts agree.

    .venv/bin/python bench/single_thread_peer.py --verify-small
    .venv/bin/python bench/single_thread_peer.py --events 165000 --runs 3
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from pathlib import Path

from common import DATA, observed_count, report, session, timed_rounds
from esper_peer import ESPER_VERSION, run_shape

SYMBOLS = 100
START_MS = 1767225600000  # 2026-01-01T00:00:00Z
MINUTE_MS = 60_000
WINDOW_MINUTES = 20
WINDOW_MS = WINDOW_MINUTES * MINUTE_MS


def offset_ms(s: int) -> int:
    """The millisecond of its minute at which symbol s ticks: distinct per symbol, and two
    symbols' offsets never differ by a whole minute."""
    return 250 + 577 * s


def rates(seed: int) -> list[float]:
    """Per-minute probability that each symbol trades (0.1-1.0, a seeded shuffle)."""
    values = [0.1 + 0.9 * i / (SYMBOLS - 1) for i in range(SYMBOLS)]
    random.Random(seed).shuffle(values)
    return values


def sym(s: int) -> str:
    return f"S{s:03d}"


def generate(events: int, seed: int) -> list[tuple[str, int, float]]:
    """`events` ticks (sym, ts_ms, price) in time order."""
    rng = random.Random(seed * 1_000_003 + 1)
    p = rates(seed)
    out: list[tuple[str, int, float]] = []
    minute = 0
    while len(out) < events:
        base = START_MS + minute * MINUTE_MS
        for s in range(SYMBOLS):
            if rng.random() < p[s]:
                out.append((sym(s), base + offset_ms(s), round(rng.uniform(50, 150), 2)))
                if len(out) == events:
                    break
        minute += 1
    return out


def pick(seed: int, per_window: float, count: int, taken: set[str]) -> list[str]:
    """`count` symbols not yet taken whose expected events per window are nearest to
    `per_window`."""
    p = rates(seed)
    order = sorted(range(SYMBOLS), key=lambda s: (abs(p[s] * WINDOW_MINUTES - per_window), s))
    chosen = [sym(s) for s in order if sym(s) not in taken][:count]
    taken.update(chosen)
    return chosen


def shapes(seed: int) -> dict[str, dict]:
    """name -> pattern, DEFINE, symbols (in EsperShapes' --syms order), esper?"""
    taken: set[str] = set()
    seq = pick(seed, 10, 4, taken)
    conj = pick(seed, 5, 4, taken)
    neg = pick(seed, 10, 3, taken) + pick(seed, 6, 1, taken)  # A B C, then N
    kleene = pick(seed, 5, 3, taken)
    return {
        "seq": dict(
            pattern="A B C D", syms=seq, esper=True,
            define="A AS sym = '{0}', B AS sym = '{1}', C AS sym = '{2}', "
                   "D AS sym = '{3}' AND D.price > A.price",
        ),
        "conj": dict(
            pattern="PERMUTE(A, B, C, D)", syms=conj, esper=True,
            define="A AS sym = '{0}', B AS sym = '{1}', C AS sym = '{2}', "
                   "D AS sym = '{3}' AND D.price > A.price",
        ),
        "neg": dict(
            pattern="A B !N C", syms=neg, esper=True,
            define="A AS sym = '{0}', B AS sym = '{1}', "
                   "C AS sym = '{2}' AND C.price > A.price, N AS sym = '{3}'",
        ),
        "kleene": dict(
            pattern="A B+ C", syms=kleene, esper=False,
            define="A AS sym = '{0}', B AS sym = '{1}', C AS sym = '{2}' AND C.price > A.price",
        ),
    }  # fmt: skip


QUERY = """SELECT * FROM {ticks} MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS a_ts, A.price AS a_price
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN ({pattern})
  WITHIN INTERVAL '{window}' MINUTE
  DEFINE {define}
)"""


def query(shape: dict, ticks: str) -> str:
    return QUERY.format(
        ticks=ticks, pattern=shape["pattern"], window=WINDOW_MINUTES,
        define=shape["define"].format(*shape["syms"]),
    )  # fmt: skip


# --- brute force ----------------------------------------------------------------------------


def brute_force(name: str, syms: list[str], events: list[tuple[str, int, float]]) -> int:
    """Counts the shape's matches by enumerating the combinations of events (small inputs)."""
    rows = {s: [(t, p) for x, t, p in events if x == s] for s in syms}
    w = WINDOW_MS
    n = 0
    if name == "seq":
        a_, b_, c_, d_ = (rows[s] for s in syms)
        for a in a_:
            for b in b_:
                for c in c_:
                    for d in d_:
                        if a[0] < b[0] < c[0] < d[0] and d[0] - a[0] <= w and d[1] > a[1]:
                            n += 1
    elif name == "conj":
        a_, b_, c_, d_ = (rows[s] for s in syms)
        for a, b, c, d in itertools.product(a_, b_, c_, d_):
            ts = (a[0], b[0], c[0], d[0])
            if len(set(ts)) == 4 and max(ts) - min(ts) <= w and d[1] > a[1]:
                n += 1
    elif name == "neg":
        a_, b_, c_, n_ = (rows[s] for s in syms)
        for a, b, c in itertools.product(a_, b_, c_):
            if (
                a[0] < b[0] < c[0]
                and c[0] - a[0] <= w
                and c[1] > a[1]
                and not any(b[0] < x[0] < c[0] for x in n_)
            ):
                n += 1
    elif name == "kleene":
        a_, b_, c_ = (rows[s] for s in syms)
        for a, c in itertools.product(a_, c_):
            if a[0] < c[0] and c[0] - a[0] <= w and c[1] > a[1]:
                between = [b for b in b_ if a[0] < b[0] < c[0]]
                for k in range(1, len(between) + 1):
                    n += sum(1 for _ in itertools.combinations(between, k))
    else:
        raise ValueError(name)
    return n


# --- running --------------------------------------------------------------------------------


def write_events(events: list[tuple[str, int, float]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        f.write("sym,ts_ms,price\n")
        for s, t, p in events:
            f.write(f"{s},{t},{p:.2f}\n")
    tmp.replace(path)


def load(spark, csv: Path, name: str) -> str:
    """The events as a view cached in memory (written as Parquet once, read back)."""
    parquet = DATA / name
    if not (parquet / "_SUCCESS").exists():
        spark.read.csv(
            str(csv), header=True, schema="sym STRING, ts_ms BIGINT, price DOUBLE"
        ).selectExpr("sym", "timestamp_millis(ts_ms) AS ts", "price").write.mode(
            "overwrite"
        ).parquet(str(parquet))
    df = spark.read.parquet(str(parquet)).cache()
    df.count()
    view = name.replace("-", "_")
    df.createOrReplaceTempView(view)
    return view


def prepare(events: int, seed: int) -> tuple[Path, list]:
    csv = DATA / f"single-thread-{events}-{seed}.csv"
    data = None
    if not csv.exists():
        print(f"[bench] generating {events:,} events ...", flush=True)
        data = generate(events, seed)
        write_events(data, csv)
    return csv, data


def verify_small(spark, a) -> None:
    csv, data = prepare(a.small_events, a.seed)
    data = data or generate(a.small_events, a.seed)
    ticks = load(spark, csv, f"single-thread-{a.small_events}-{a.seed}")
    rows = []
    for name, shape in shapes(a.seed).items():
        ours, _ = observed_count(spark, query(shape, ticks))
        brute = brute_force(name, shape["syms"], data)
        esper = (
            run_shape(csv, name, shape["syms"], WINDOW_MS, runs=1)["matches"]
            if shape["esper"] else "n/a"
        )  # fmt: skip
        agree = ours == brute and esper in (brute, "n/a")
        rows.append(
            dict(
                shape=name,
                pattern=shape["pattern"],
                symbols=" ".join(shape["syms"]),
                brute_force=brute,
                ours=ours,
                esper=esper,
                agree="yes" if agree else "NO",
            )
        )
    report(f"counts on {a.small_events:,} events (brute force, ours, Esper)", rows)
    if any(r["agree"] != "yes" for r in rows):
        raise SystemExit("match counts differ from the brute-force count")


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=165_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cores", type=int, default=2, help="our side's local[cores]")
    p.add_argument("--shapes", default="seq,conj,neg,kleene")
    p.add_argument(
        "--verify-small",
        action="store_true",
        help="check both engines against a brute-force count on a small stream",
    )
    p.add_argument("--small-events", type=int, default=4000)
    p.add_argument("--json", help="write the figures to this file")
    a = p.parse_args()

    spark = session("bench-single-thread-peer", cores=a.cores)
    if a.verify_small:
        verify_small(spark, a)
        return

    csv, _ = prepare(a.events, a.seed)
    ticks = load(spark, csv, f"single-thread-{a.events}-{a.seed}")
    wanted = a.shapes.split(",")
    all_shapes = {k: v for k, v in shapes(a.seed).items() if k in wanted}
    sqls = {name: query(shape, ticks) for name, shape in all_shapes.items()}
    counts = {}
    for name, sql in sqls.items():
        print(f"[bench] counting {name} ({all_shapes[name]['pattern']}) ...", flush=True)
        counts[name], _ = observed_count(spark, sql)
    print(f"[bench] timing our side in {a.runs} interleaved rounds ...", flush=True)
    ours = timed_rounds(spark, sqls, runs=a.runs, warmups=1)
    esper = {}
    for name, shape in all_shapes.items():
        if shape["esper"]:
            print(f"[bench] Esper {ESPER_VERSION}: {name} ...", flush=True)
            esper[name] = run_shape(csv, name, shape["syms"], WINDOW_MS, runs=a.runs)
    spark.stop()

    rows, mismatches = [], []
    for name, shape in all_shapes.items():
        ours_s = ours[name][0]
        e = esper.get(name)
        if e is not None and e["matches"] != counts[name]:
            mismatches.append(f"{name}: ours {counts[name]}, Esper {e['matches']}")
        rows.append({
            "shape": name,
            "pattern": shape["pattern"],
            "ours s": round(ours_s, 3),
            "ours events/s": round(a.events / ours_s),
            "esper s": round(e["seconds"], 3) if e else "n/a",
            "esper events/s": e["events_per_second"] if e else "n/a",
            "esper s / ours s": round(e["seconds"] / ours_s, 2) if e else "n/a",
            "matches": counts[name],
            "esper matches": e["matches"] if e else "n/a (no equal-semantics EPL)",
        })  # fmt: skip
    report(
        f"{a.events:,} ticks, {SYMBOLS} symbols, WITHIN {WINDOW_MINUTES} minutes; ours local"
        f"[{a.cores}] (median of {a.runs} interleaved rounds), Esper {ESPER_VERSION} one thread "
        f"(median of {a.runs} runs)",
        rows, a.json,
    )  # fmt: skip
    if mismatches:
        print("match counts differ: " + "; ".join(mismatches), file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
