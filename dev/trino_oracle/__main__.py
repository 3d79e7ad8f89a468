"""dev/trino-oracle: random MATCH_RECOGNIZE cases run in Trino and in this extension.

    dev/trino-oracle --cases 500 --seed 1 --time-budget 3600

Prints progress and a summary; writes ``report.json`` (every disagreement: both queries,
both outcomes, the Python reference's) under ``--results`` (default trino-oracle-results/,
ignored by git). Exit status 0 when every case agreed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from . import compare, conformance, known
from .cases import ROOT, generate
from .spark_engine import SparkEngine
from .trino_engine import TrinoEngine, TrinoTimeout, trino_version


def _parse(argv):
    parser = argparse.ArgumentParser(prog="dev/trino-oracle", description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=500, help="how many cases (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="first case seed (default 1)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=0,
        help="stop starting new cases after this many seconds (default: no limit)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=ROOT / "trino-oracle-results",
        help="where report.json and trino.log go (default trino-oracle-results/)",
    )
    parser.add_argument("--query-timeout", type=float, default=300, help="seconds per Trino query")
    parser.add_argument("--trino-heap", default="3g", help="Trino's -Xmx (default 3g)")
    parser.add_argument(
        "--sql",
        type=Path,
        help="instead of random cases, run the queries of this file (separated by lines "
        "holding only ';') in both engines and print both outcomes",
    )
    parser.add_argument(
        "--conformance",
        action="store_true",
        help="instead of random cases, run the conformance suite (tests/conformance/, less "
        "the extensions Trino lacks) in both engines and compare each with its expectation",
    )
    parser.add_argument(
        "--classify",
        type=Path,
        metavar="REPORT",
        help="no engines: re-tag the disagreements of an earlier report.json with the known "
        "classes of docs/trino-oracle.md, print the counts and rewrite the report",
    )
    parser.add_argument(
        "--progress-every", type=int, default=10, help="cases between progress lines"
    )
    return parser.parse_args(argv)


def _say(message: str) -> None:
    print(f"[trino-oracle] {message}", flush=True)


class Run:
    """The counts and the recorded disagreements of one run."""

    def __init__(self, args):
        self.args = args
        self.counts: Counter = Counter()
        self.features: Counter = Counter()
        self.kinds: Counter = Counter()
        self.known: Counter = Counter()
        self.disagreements: list[dict] = []
        self.started = time.monotonic()

    def record(self, case, trino: dict, spark: dict, status: str, detail: str | None) -> None:
        self.counts[status] += 1
        self.counts["cases"] += 1
        self.features.update(case.features())
        if status in (compare.BOTH_ERROR,):
            self.kinds[detail] += 1
        if status in (compare.MATCH, compare.BOTH_ERROR):
            return
        reference = case.reference(budget=None)
        known_class = known.known_class(case, status, trino, spark)
        self.known[known_class or "new"] += 1
        self.disagreements.append(
            {
                "seed": case.seed,
                "status": status,
                "known_class": known_class,
                "detail": detail,
                "features": case.features(),
                "reference_agrees_with": [
                    name
                    for name, outcome in (("trino", trino), ("spark", spark))
                    if compare.agrees_with(reference, outcome)
                ],
                "trino_sql": case.sql("trino"),
                "spark_sql": case.sql("spark"),
                "trino": trino,
                "spark": spark,
                "reference": reference,
            }
        )

    def line(self) -> str:
        c = self.counts
        return (
            f"{c['cases']} cases: {c[compare.MATCH]} same rows, "
            f"{c[compare.BOTH_ERROR]} same error, {c[compare.MISMATCH]} different rows, "
            f"{c[compare.ERROR_MISMATCH]} different errors, "
            f"{c[compare.TRINO_ERROR]} Trino-only errors, "
            f"{c[compare.SPARK_ERROR]} Spark-only errors "
            f"({time.monotonic() - self.started:.0f}s)"
        )

    def all_agreed(self) -> bool:
        agreed = self.counts[compare.MATCH] + self.counts[compare.BOTH_ERROR]
        return self.counts["cases"] == agreed

    def known_line(self) -> str:
        parts = [f"{n} {name}" for name, n in sorted(self.known.items()) if name != "new"]
        return f"disagreements: {self.known['new']} new, known: {', '.join(parts) or 'none'}"

    def write(self) -> Path:
        self.args.results.mkdir(parents=True, exist_ok=True)
        path = self.args.results / "report.json"
        report = {
            "trino_version": trino_version(),
            "first_seed": self.args.seed,
            "seconds": round(time.monotonic() - self.started),
            "summary": {s: self.counts[s] for s in ("cases", *compare.STATUSES)},
            "same_errors": dict(self.kinds),
            "disagreement_classes": dict(self.known),
            "features": dict(sorted(self.features.items())),
            "disagreements": self.disagreements,
        }
        path.write_text(json.dumps(report, indent=2, default=str) + "\n")
        return path


def _run_file(path: Path, trino: TrinoEngine, spark: SparkEngine, timeout: float) -> int:
    """Runs each query of ``path`` in both engines; prints the outcomes and whether they agree."""
    queries = [q.strip() for q in path.read_text().split("\n;\n") if q.strip()]
    disagreements = 0
    for number, sql in enumerate(queries, 1):
        trino.submit(sql)
        spark_outcome = spark.run(sql)
        trino_outcome = trino.result(timeout)
        status, detail = compare.classify(trino_outcome, spark_outcome)
        disagreements += status not in (compare.MATCH, compare.BOTH_ERROR)
        print(f"-- query {number}: {status}\n{sql}")
        for name, outcome in (("Trino", trino_outcome), ("Spark", spark_outcome)):
            shown = outcome.get("error") or f"{outcome['columns']} {outcome['rows']}"
            print(f"   {name}: {shown}")
    return 1 if disagreements else 0


def _run_conformance(results: Path, trino: TrinoEngine, spark: SparkEngine, timeout: float) -> int:
    """Runs the conformance cases in both engines; prints every case where an engine's outcome
    is not the expectation, writes ``conformance-report.json``."""
    cases, skipped = conformance.load()
    verdicts: Counter = Counter()
    differences = []
    for case in cases:
        sql = conformance.trino_sql(case["sql"])
        trino.submit(sql)
        spark_outcome = spark.run(case["sql"])
        try:
            trino_outcome = trino.result(timeout)
        except TrinoTimeout as error:
            trino_outcome = {"error": f"timeout: {error}"}
        verdict = conformance.verdict(case, trino_outcome, spark_outcome)
        verdicts[verdict] += 1
        if verdict == "agree":
            continue
        tag = known.conformance_class(case["id"], verdict)
        verdicts[f"known: {tag}" if tag else "new"] += 1
        _say(f"{case['id']}: {verdict} [{tag or 'new'}]")
        for name, outcome in (("Trino", trino_outcome), ("Spark", spark_outcome)):
            shown = outcome.get("error") or f"{outcome['columns']} {outcome['rows']}"
            _say(f"   {name}: {shown.splitlines()[0][:300]}")
        differences.append(
            {
                "id": case["id"],
                "verdict": verdict,
                "known_class": tag,
                "trino_sql": sql,
                "spark_sql": case["sql"],
                "expected": conformance.expected_outcome(case),
                "trino": trino_outcome,
                "spark": spark_outcome,
            }
        )
    results.mkdir(parents=True, exist_ok=True)
    path = results / "conformance-report.json"
    report = {
        "trino_version": trino_version(),
        "cases": len(cases),
        "skipped_extensions": len(skipped),
        "verdicts": dict(verdicts),
        "differences": differences,
    }
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    _say(
        f"conformance: {len(cases)} cases run ({len(skipped)} extension cases skipped), "
        f"{verdicts['agree']} agree with the expectation in both engines, "
        f"{verdicts['trino_differs']} only Trino differs, "
        f"{verdicts['spark_differs']} only the extension differs, "
        f"{verdicts['both_differ']} both differ; {verdicts['new']} new"
    )
    _say(f"report: {path}")
    return 0 if not verdicts["new"] else 1


def _classify(path: Path) -> int:
    """Re-tags a report's disagreements (the cases are regenerated from their seeds)."""
    report = json.loads(path.read_text())
    classes: Counter = Counter()
    for entry in report["disagreements"]:
        case = generate(entry["seed"])
        if case.sql("trino") != entry["trino_sql"]:
            raise SystemExit(f"seed {entry['seed']} no longer gives the reported query")
        tag = known.known_class(case, entry["status"], entry["trino"], entry["spark"])
        entry["known_class"] = tag
        classes[tag or "new"] += 1
        _say(f"seed {entry['seed']}: {entry['status']} [{tag or 'new'}]")
    report["disagreement_classes"] = dict(classes)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    _say(f"{report['summary']}")
    _say(f"classes: {dict(classes)}")
    return 0 if not classes["new"] else 1


def main(argv=None) -> int:
    args = _parse(argv)
    if args.classify:
        return _classify(args.classify)
    trino = TrinoEngine(args.results / "trino.log", heap=args.trino_heap)
    failure: list[BaseException] = []

    def start_trino():
        try:
            trino.start()
        except BaseException as error:  # reported below, on the main thread
            failure.append(error)

    starter = threading.Thread(target=start_trino)
    starter.start()  # Trino takes longest to start: Spark starts meanwhile
    _say("starting Spark (local[2]) with the extension")
    spark = SparkEngine()
    starter.join()
    if failure:
        spark.stop()
        raise failure[0]

    if args.sql or args.conformance:
        try:
            if args.conformance:
                return _run_conformance(args.results, trino, spark, args.query_timeout)
            return _run_file(args.sql, trino, spark, args.query_timeout)
        finally:
            trino.stop()
            spark.stop()

    run = Run(args)
    try:
        for seed in range(args.seed, args.seed + args.cases):
            if args.time_budget and time.monotonic() - run.started > args.time_budget:
                _say(f"time budget of {args.time_budget:.0f}s spent")
                break
            case = generate(seed)
            trino.submit(case.sql("trino"))  # Trino runs while Spark does
            spark_outcome = spark.run(case.sql("spark"))
            try:
                trino_outcome = trino.result(args.query_timeout)
            except TrinoTimeout as error:
                trino_outcome = {"error": f"timeout: {error}"}
            status, detail = compare.classify(trino_outcome, spark_outcome)
            run.record(case, trino_outcome, spark_outcome, status, detail)
            if status not in (compare.MATCH, compare.BOTH_ERROR):
                tag = run.disagreements[-1]["known_class"] or "new"
                _say(f"seed {seed}: {status} [{tag}] ({(detail or '').splitlines()[0][:120]})")
            if run.counts["cases"] % args.progress_every == 0:
                _say(run.line())
                run.write()
    finally:
        trino.stop()
        spark.stop()
        path = run.write()
    _say("done: " + run.line())
    _say(run.known_line())
    _say(f"report: {path}")
    return 0 if run.all_agreed() else 1


if __name__ == "__main__":
    sys.exit(main())
