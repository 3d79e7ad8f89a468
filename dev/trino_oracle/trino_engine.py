"""Trino, started in-process in a JVM of its own, answering one query at a time.

The engine's jars are fetched once with Maven (``pom.xml`` beside this file, through
Maven's default configuration) into ``~/.cache/spark-match-recognize/trino-<version>/lib``,
and ``TrinoOracleDriver.java`` is compiled there with Java 25's javac (Trino needs Java 25;
the JDK is taken from ``TRINO_JAVA_HOME``, by default ``/usr/lib/jvm/temurin-25-jdk-amd64``).
The driver reads one JSON request per line and writes one JSON reply per line.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
DRIVER_SOURCE = HERE / "TrinoOracleDriver.java"
DEFAULT_JAVA_HOME = "/usr/lib/jvm/temurin-25-jdk-amd64"


class TrinoUnavailable(RuntimeError):
    """Trino could not be fetched, compiled against or started."""


class TrinoTimeout(RuntimeError):
    """A query did not answer in time (the engine is restarted)."""


def trino_version() -> str:
    found = re.search(r"<trino.version>([^<]+)</trino.version>", POM.read_text())
    if not found:
        raise TrinoUnavailable(f"{POM} names no trino.version")
    return found.group(1)


def cache_dir() -> Path:
    base = os.environ.get("SMR_CACHE_DIR", str(Path.home() / ".cache" / "spark-match-recognize"))
    return Path(base) / f"trino-{trino_version()}"


def java_home() -> Path:
    home = Path(os.environ.get("TRINO_JAVA_HOME", DEFAULT_JAVA_HOME))
    if not (home / "bin" / "javac").exists():
        raise TrinoUnavailable(
            f"no JDK at {home} (Trino {trino_version()} needs Java 25; set TRINO_JAVA_HOME)"
        )
    return home


def _log(message: str) -> None:
    print(f"[trino-oracle] {message}", file=sys.stderr, flush=True)


def ensure_jars() -> Path:
    """The directory of Trino's jars, fetched with Maven the first time."""
    lib = cache_dir() / "lib"
    done = lib / ".complete"
    if done.exists():
        return lib
    lib.mkdir(parents=True, exist_ok=True)
    _log(f"fetching Trino {trino_version()} (trino-main and its dependencies) with Maven")
    command = [
        "mvn",
        "-q",
        "-B",
        "-f",
        str(POM),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={lib}",
    ]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        output = finished.stdout[-3000:] + finished.stderr[-3000:]
        raise TrinoUnavailable(f"mvn failed ({finished.returncode}):\n{output}")
    done.write_text("ok\n")
    return lib


def ensure_driver(lib: Path) -> Path:
    """The compiled driver's class directory, recompiled when its source changed."""
    classes = cache_dir() / "classes"
    compiled = classes / "TrinoOracleDriver.class"
    if compiled.exists() and compiled.stat().st_mtime >= DRIVER_SOURCE.stat().st_mtime:
        return classes
    classes.mkdir(parents=True, exist_ok=True)
    javac = java_home() / "bin" / "javac"
    command = [str(javac), "-cp", f"{lib}/*", "-d", str(classes), str(DRIVER_SOURCE)]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        raise TrinoUnavailable(f"javac failed:\n{finished.stdout}{finished.stderr}")
    return classes


class TrinoEngine:
    """One running driver process. ``submit`` sends a query; ``result`` waits for its reply,
    so a caller can run the other engine meanwhile."""

    def __init__(self, log_path: Path, heap: str = "3g", start_timeout: float = 900.0):
        self.log_path = log_path
        self.heap = heap
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.replies: queue.Queue = queue.Queue()
        self.pending: str | None = None
        self.next_id = 0

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        lib = ensure_jars()
        classes = ensure_driver(lib)
        java = java_home() / "bin" / "java"
        command = [
            str(java),
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "--enable-native-access=ALL-UNNAMED",
            # Trino 480+ reads the SIMD support of its block encodings at start-up
            "--add-modules=jdk.incubator.vector",
            "-cp",
            f"{classes}:{lib}/*",
            "TrinoOracleDriver",
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        _log(f"starting Trino {trino_version()} in-process (log: {self.log_path})")
        began = time.monotonic()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
        )
        self.replies = queue.Queue()
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        try:
            first = self.replies.get(timeout=self.start_timeout)
        except queue.Empty:
            self.stop()
            raise TrinoUnavailable(f"Trino did not start in {self.start_timeout:.0f}s") from None
        if first is None or not first.get("ready"):
            self.stop()
            raise TrinoUnavailable(f"Trino exited while starting; see {self.log_path}")
        _log(f"Trino ready after {time.monotonic() - began:.0f}s")

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            line = line.strip()
            if line.startswith("{"):
                self.replies.put(json.loads(line))
        self.replies.put(None)  # the process ended

    def stop(self, kill: bool = False) -> None:
        if self.process is None:
            return
        process, self.process = self.process, None
        try:
            if kill:
                process.kill()
            else:
                process.stdin.close()
            process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- queries ----------------------------------------------------------------------------

    def submit(self, sql: str) -> None:
        assert self.pending is None, "one query at a time"
        if self.process is None:
            self.start()
        self.next_id += 1
        self.pending = str(self.next_id)
        self.process.stdin.write(json.dumps({"id": self.pending, "sql": sql}) + "\n")
        self.process.stdin.flush()

    def result(self, timeout: float) -> dict:
        """The reply to the submitted query: ``{"columns", "types", "rows"}`` or
        ``{"error"}``. Raises TrinoTimeout (after restarting the engine) when it takes
        longer than ``timeout`` seconds."""
        wanted, self.pending = self.pending, None
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = self.replies.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop(kill=True)
                raise TrinoTimeout(f"no answer in {timeout:.0f}s") from None
            if reply is None:
                self.process = None
                raise TrinoUnavailable(f"Trino exited; see {self.log_path}")
            if reply.get("id") == wanted:
                return reply

    def run(self, sql: str, timeout: float = 300.0) -> dict:
        self.submit(sql)
        return self.result(timeout)
