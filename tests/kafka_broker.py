"""A real Kafka broker for the tests, and Spark's Kafka connector jars (not a test file).

Both come from ``dev/kafka``, which fetches Apache Kafka and the connector with Maven into
``~/.cache/spark-match-recognize`` once:

    with kafka_broker(tmp_path) as broker:      # "127.0.0.1:PORT", a str
        broker.create_topic("events", partitions=2)
        ...  # .option("kafka.bootstrap.servers", broker)

    builder.config("spark.jars", ",".join(kafka_spark_jars()))

A broker that cannot start raises :class:`KafkaBrokerError` with the script's message and
the tail of the broker's log: a test using it fails, it never skips.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from project_settings import SPARK_RELEASES

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "dev" / "kafka"

# A cold cache first fetches the broker or the connector with Maven; then start-up itself
# takes seconds (dev/kafka gives up on the broker after 90 s).
_TIMEOUT_SECONDS = 900


class KafkaBrokerError(RuntimeError):
    """dev/kafka failed: the broker did not start or stop, or a fetch failed."""


def _dev_kafka(*args: str) -> str:
    """Runs ``dev/kafka ARGS`` and returns what it printed on stdout, stripped."""
    command = [str(SCRIPT), *args]
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired as e:
        raise KafkaBrokerError(
            f"dev/kafka {' '.join(args)} did not finish within {_TIMEOUT_SECONDS}s"
        ) from e
    if result.returncode != 0:
        raise KafkaBrokerError(
            f"dev/kafka {' '.join(args)} failed (exit {result.returncode}):\n"
            + result.stderr[-6000:]
        )
    return result.stdout.strip()


class KafkaBroker(str):
    """The bootstrap address of a running broker (``127.0.0.1:PORT``), plus its folder."""

    directory: Path

    def __new__(cls, address: str, directory: Path) -> KafkaBroker:
        broker = super().__new__(cls, address)
        broker.directory = directory
        return broker

    def create_topic(self, name: str, partitions: int = 1) -> None:
        """Creates topic ``name`` (replication factor 1); the broker auto-creates none."""
        _dev_kafka("topic", str(self.directory), name, str(partitions))


@contextmanager
def kafka_broker(tmp_path: Path | str) -> Iterator[KafkaBroker]:
    """Starts a single-node KRaft broker with its files under ``tmp_path/kafka``, yields its
    bootstrap address, and always stops it.

    As a pytest fixture::

        @pytest.fixture
        def broker(tmp_path):
            with kafka_broker(tmp_path) as address:
                yield address
    """
    directory = Path(tmp_path) / "kafka"
    try:
        address = _dev_kafka("start", str(directory))
        if not address.startswith("127.0.0.1:"):
            raise KafkaBrokerError(f"dev/kafka start printed {address!r}, not 127.0.0.1:PORT")
        yield KafkaBroker(address, directory)
    finally:
        _dev_kafka("stop", str(directory))


def connector_releases(spark_version: str) -> list[str]:
    """The releases of Spark's Kafka connector to try with pyspark ``spark_version``, best
    first: the same release, the earlier patch releases of its line (the Maven repository
    here lacks some releases or their dependencies, 4.0.4's and 4.1.3's among them, and
    patches of a line are compatible), then the releases of the earlier lines that
    pyproject.toml names, newest first (for a line the repository does not serve at all,
    4.3 today)."""
    major, minor, patch = (int(p) for p in spark_version.split(".")[:3])
    candidates = [f"{major}.{minor}.{p}" for p in range(patch, -1, -1)]
    earlier = [
        release
        for line, release in SPARK_RELEASES.items()
        if tuple(int(p) for p in line.split(".")) < (major, minor)
    ]
    return candidates + sorted(earlier, key=lambda r: [int(p) for p in r.split(".")], reverse=True)


def kafka_spark_jars() -> list[str]:
    """Local paths of Spark's Kafka connector for the installed pyspark
    (``org.apache.spark:spark-sql-kafka-0-10_2.13``, the first of
    :func:`connector_releases` that Maven can fetch) and of its runtime dependencies that
    pyspark does not ship itself (kafka-clients, the token provider, commons-pool2), for
    ``spark.jars``."""
    import pyspark

    spark_jars = Path(pyspark.__file__).resolve().parent / "jars"
    failures = []
    for release in connector_releases(pyspark.__version__):
        try:
            listing = _dev_kafka("connector-jars", release, str(spark_jars))
            break
        except KafkaBrokerError as e:
            failures.append(f"{release}: {str(e).splitlines()[-1]}")
    else:
        raise KafkaBrokerError("no Kafka connector could be fetched:\n" + "\n".join(failures))
    jars = [jar for jar in listing.split(",") if jar]
    if not any("spark-sql-kafka" in Path(jar).name for jar in jars):
        raise KafkaBrokerError(f"dev/kafka connector-jars gave no connector jar: {listing!r}")
    return jars
