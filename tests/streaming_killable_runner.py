"""Runs one streaming MATCH_RECOGNIZE query from a file source into a parquet sink, in a
Spark session of its own, for test_streaming.py's driver-kill test.

    python tests/streaming_killable_runner.py SPEC.json

SPEC holds ``source``, ``sink``, ``checkpoint``, ``schema``, ``sql`` (over the view
``events``) and ``mode``: ``forever`` runs with a processing-time trigger until the process
is killed; ``finish`` runs with ``trigger(availableNow=True)`` until every file is read.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ["TZ"] = "UTC"
time.tzset()

from pyspark.sql import SparkSession  # noqa: E402

from spark_match_recognize import configure  # noqa: E402
from spark_match_recognize.demo import local_checkpoint_conf  # noqa: E402


def main() -> None:
    spec = json.loads(open(sys.argv[1]).read())
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config(map=local_checkpoint_conf())
    )
    spark = configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    (
        spark.readStream.schema(spec["schema"])
        .option("maxFilesPerTrigger", 1)
        .json(spec["source"])
        .withWatermark("ts", "5 seconds")
        .createOrReplaceTempView("events")
    )
    writer = (
        spark.sql(spec["sql"])
        .writeStream.format("parquet")
        .option("path", spec["sink"])
        .option("checkpointLocation", spec["checkpoint"])
        .outputMode("append")
    )
    if spec["mode"] == "forever":
        writer.trigger(processingTime="200 milliseconds").start()
        print("STARTED", flush=True)
        while True:
            time.sleep(1)
    query = writer.trigger(availableNow=True).start()
    query.awaitTermination()
    print("FINISHED", flush=True)


if __name__ == "__main__":
    main()
