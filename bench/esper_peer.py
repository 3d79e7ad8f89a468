"""Esper (EsperTech, 9.0.0) as a single-threaded benchmark peer of SKIP TILL ANY MATCH.

Runs one named pattern shape of bench/esper_peer/EsperShapes.java over a `sym,ts_ms,price`
CSV file (sorted by time; bench/single_thread_peer.py writes one) and prints its JSON line:

    {"system": "esper", "version": ..., "shape": ..., "events": N, "matches": M,
     "seconds": S, "events_per_second": N/S, "runs": [...], "epl": ...}

`seconds` is the time to send all events to one Esper runtime from one thread, with event
time (the runtime's clock advanced to each event's time before it is sent), the median of
`--runs` runs on fresh runtimes after an untimed warm-up run.

On first use the Esper jars (esper-common, esper-compiler, esper-runtime and their
dependencies) are copied by `mvn dependency:copy-dependencies` from the repositories
configured for `mvn` into bench/data/esper/lib, and EsperShapes.java is compiled with `javac`
into bench/data/esper/classes (again whenever the source is newer):

    .venv/bin/python bench/esper_peer.py events.csv --shape seq \\
        --syms S001,S002,S003,S004 --window-ms 1200000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ESPER_VERSION = os.environ.get("ESPER_PEER_VERSION", "9.0.0")
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "esper_peer" / "EsperShapes.java"
CACHE = Path(os.environ.get("SMR_BENCH_DATA", HERE / "data")) / "esper"
LIB = CACHE / "lib"
CLASSES = CACHE / "classes"
MARKER = LIB / f".esper-{ESPER_VERSION}"

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.bench</groupId>
  <artifactId>esper-peer</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
ARTIFACTS = ("esper-common", "esper-compiler", "esper-runtime")


def log(msg: str) -> None:
    print(f"[esper_peer] {msg}", file=sys.stderr, flush=True)


def ensure_jars() -> Path:
    """The folder of Esper's jars, fetched with mvn on first use."""
    if MARKER.exists():
        return LIB
    CACHE.mkdir(parents=True, exist_ok=True)
    deps = "\n".join(
        f"    <dependency><groupId>com.espertech</groupId><artifactId>{a}</artifactId>"
        f"<version>{ESPER_VERSION}</version></dependency>"
        for a in ARTIFACTS
    )
    (CACHE / "pom.xml").write_text(POM.format(deps=deps))
    log(f"fetching Esper {ESPER_VERSION} with mvn into {LIB}")
    for old in LIB.glob("*.jar") if LIB.exists() else ():
        old.unlink()
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(CACHE / "pom.xml"), "dependency:copy-dependencies",
         f"-DoutputDirectory={LIB}"],
        check=True, stdout=sys.stderr,
    )  # fmt: skip
    MARKER.write_text(f"esper {ESPER_VERSION}\n")
    return LIB


def classpath() -> str:
    """Esper's jars and the compiled EsperShapes, compiling it when the source is newer."""
    lib = ensure_jars()
    compiled = CLASSES / "EsperShapes.class"
    if not compiled.exists() or compiled.stat().st_mtime < SOURCE.stat().st_mtime:
        CLASSES.mkdir(parents=True, exist_ok=True)
        log(f"compiling {SOURCE.name}")
        subprocess.run(
            ["javac", "-cp", f"{lib}/*", "-d", str(CLASSES), str(SOURCE)],
            check=True, stdout=sys.stderr,
        )  # fmt: skip
    return f"{lib}/*{os.pathsep}{CLASSES}"


def run_shape(
    csv: str | Path,
    shape: str,
    syms: list[str],
    window_ms: int,
    runs: int = 3,
    epl: str | None = None,
    heap: str = "4g",
) -> dict:
    """Runs one shape in a JVM of its own and returns its JSON line as a dict."""
    cmd = [
        "java",
        f"-Xmx{heap}",
        "-cp",
        classpath(),
        "EsperShapes",
        "--csv",
        str(csv),
        "--shape",
        shape,
        "--syms",
        ",".join(syms),
        "--window-ms",
        str(window_ms),
        "--runs",
        str(runs),
        "--version",
        ESPER_VERSION,
    ]
    if epl is not None:
        cmd += ["--epl", epl]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"no result from Esper:\n{out.stdout}\n{out.stderr}")
    return json.loads(lines[-1])


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("csv", help="sym,ts_ms,price events, in time order")
    p.add_argument("--shape", default="seq", help="seq, conj or neg (EsperShapes.java)")
    p.add_argument("--syms", required=True, help="the shape's symbols, comma-separated")
    p.add_argument("--window-ms", type=int, default=20 * 60 * 1000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--epl", help="an EPL module to run instead of the named shape")
    a = p.parse_args()
    result = run_shape(a.csv, a.shape, a.syms.split(","), a.window_ms, a.runs, a.epl)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
