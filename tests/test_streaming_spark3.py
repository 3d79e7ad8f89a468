"""Streams on Spark 3.5, which has no ``transformWithState``: every stream runs in
``flatMapGroupsWithState`` (the other streaming tests run there on every line), and asking
for the other operator is refused when the query starts, with an error that names the line
to use instead of a failure inside Spark."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

import test_streaming
from session_settings import settings
from streaming_harness import SPARK_3

pytestmark = pytest.mark.skipif(not SPARK_3, reason="Spark 4.0 and later have the operator")


@pytest.mark.smoke
def test_the_transform_with_state_operator_is_refused_with_the_line_to_use(spark, tmp_path):
    stream = test_streaming._analyze_over_stream(spark, tmp_path, test_streaming.V_SHAPE)
    writer = (
        stream.writeStream.format("memory")
        .queryName("spark3_refused")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
    )
    with settings(spark, {"spark.sql.matchRecognize.streaming.operator": "transformWithState"}):
        with pytest.raises(AnalysisException) as info:
            writer.start().stop()
    message = str(info.value)
    assert "MATCH_RECOGNIZE.STREAMING_OPERATOR" in message, message
    assert "Spark 3.5 does not have" in message and "Spark 4.0 or later" in message, message
    # The default operator starts.
    writer.start().stop()
