"""Streaming checkpoints written by earlier releases restore in this one: each committed
fixture (tests/checkpoints/, written by dev/write_checkpoint_fixtures.py, which says how) is
a query stopped part-way, its state holding partial matches, matches held by a trailing
negation and rows waiting for the watermark. Restarted on a copy with the rows still to
come, the query's output before and after the stop is the batch result on all rows.

``format-4`` was written by the release whose SKIP TILL ANY MATCH state was Java-serialized
(format 4), ``format-5`` by the explicit layout of this one; both hold a standard-semantics
query too (format 2). ``transform-with-state`` holds both queries run in Spark's
``transformWithState`` operator (restarted with the settings its record lists), and
``transform-with-state-late-rows`` the same with late rows kept under a time to live, one
row already late: it stays out of the matches and reads back after the restart. Both were
written before format 6, so their SKIP TILL ANY MATCH states (format 5) are rewritten as
format 7 by the restart; ``format-6`` holds the queries in ``transformWithState`` written
by the release that first kept that state entry by entry (rows and each node's matches in
entries of their own), rewritten as format 7 by the restart, and ``format-7`` by the one
that keeps what each call added in one entry; ``format-8`` by the one that keeps a
standard-semantics key's rows in map entries (format 8), where the earlier fixtures'
standard states in ``transformWithState`` (format 2) are rewritten as format 8.
``trees-per-key`` and ``trees-per-key-transform-with-state`` hold one SKIP TILL ANY MATCH
query whose keys move between two trees every few rows, stopped with keys part-way through a
move (formats 5 and 7 with the section naming each key's trees, written before pairs of
variables were measured); ``trees-per-key-pairs`` and
``trees-per-key-pairs-transform-with-state`` the same with the pairs' counts;
``trees-per-key-sequence`` and its ``transformWithState`` twin add a query with many matches
whose keys, written before leaves kept all their rows, move the slow way until a window
has passed after the restart (the tree left reading on); ``trees-per-key-leaves`` and its
twin the same written with the ``LEAF`` section, whose keys move by rebuilding.
``pattern-table`` and its twin hold ``PATTERNS FROM`` queries under both semantics, a key's
state holding each pattern's own (the view of patterns is created again from the record). A
state of a format this release does not read is refused, naming the format. The fixtures are
Spark 4.3 checkpoints, so these tests run on that line only (no ``smoke`` mark).
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import struct
from pathlib import Path

import pytest

from result_compare import compare_rows
from session_settings import settings
from spark_match_recognize import late_rows
from streaming_harness import (
    FLUSH_PART,
    create_pattern_view,
    run_batch,
    run_from_checkpoint,
    write_batches,
)

FIXTURES = Path(__file__).resolve().parent / "checkpoints"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# Every key's state opens with its format number and the count of the query's signature
# parts (8); see QuerySignature.
SIGNATURE_PARTS = 8


def _rows(batches: list[list[list]], ts: int) -> list[list[tuple]]:
    return [
        [
            tuple(
                datetime.datetime.strptime(v, TIME_FORMAT) if i == ts else v
                for i, v in enumerate(r)
            )
            for r in batch
        ]
        for batch in batches
    ]


def _copy(fixture: Path, tmp_path: Path) -> tuple[dict, Path]:
    """A copy of the fixture to restart (a run writes into its checkpoint) and its record.

    Spark's operator metadata (``state/<op>/_metadata/v2``, written for transformWithState)
    names the operator's state schema files by absolute path, which a restart reads and
    writes: in the copy they are made to name the copy's own files."""
    copy = tmp_path / fixture.name
    shutil.copytree(fixture, copy)
    state = copy / "checkpoint" / "state"
    for metadata in state.glob("*/_metadata/v2/[0-9]*"):
        text = metadata.read_text(encoding="utf-8")
        moved = re.sub(r'"file:[^"]*?/checkpoint/state/', f'"file:{state}/', text)
        metadata.write_text(moved, encoding="utf-8")
        metadata.with_name(f".{metadata.name}.crc").unlink(missing_ok=True)
    return json.loads((copy / "fixture.json").read_text()), copy


def _restart(spark, record: dict, copy: Path, tmp_path: Path) -> list[tuple]:
    """Restarts the copy with the rows still to come, under the settings it was written
    with (the stateful operator's); returns the rows written after the restart."""
    if "patterns" in record:
        view = re.search(r"PATTERNS FROM global_temp\.(\w+)", record["sql"]).group(1)
        create_pattern_view(spark, view, record["patterns"])
    ts = record["columns"].index("ts")
    write_batches(copy / "source", record["columns"], _rows(record["after"], ts))
    with settings(spark, record.get("settings", {})):
        return run_from_checkpoint(
            spark,
            record["schema"],
            record["sql"],
            copy / "source",
            copy / "checkpoint",
            tmp_path / "sink",
        )


FOLDERS = [
    "format-4",
    "format-5",
    "transform-with-state",
    "transform-with-state-late-rows",
    "format-6",
    "format-7",
    "format-8",
    "trees-per-key",
    "trees-per-key-transform-with-state",
    "trees-per-key-pairs",
    "trees-per-key-pairs-transform-with-state",
    "trees-per-key-sequence",
    "trees-per-key-sequence-transform-with-state",
    "trees-per-key-leaves",
    "trees-per-key-leaves-transform-with-state",
    "pattern-table",
    "pattern-table-transform-with-state",
]
QUERIES = [
    "any_match",
    "any_match_sequence",
    "standard",
    "patterns_any_match",
    "patterns_standard",
]


@pytest.mark.parametrize(
    "folder,query",
    [
        (folder, query)
        for folder in FOLDERS
        for query in QUERIES
        if (FIXTURES / folder / query).is_dir()
    ],
)
def test_a_committed_checkpoint_restores_and_ends_as_the_batch_result(
    spark, tmp_path, folder, query
):
    record, copy = _copy(FIXTURES / folder / query, tmp_path)
    after = _restart(spark, record, copy, tmp_path)
    before = [tuple(r) for r in record["written"]]
    ts = record["columns"].index("ts")
    part = record["columns"].index("part")
    late = _rows([record.get("late", [])], ts)[0]
    rows = [
        r
        for batch in _rows(record["before"] + record["after"], ts)
        for r in batch
        if r[part] != FLUSH_PART and r not in late
    ]
    expected = run_batch(spark, record["schema"], rows, record["sql"])
    diff = compare_rows(before + after, expected, ordered=False)
    assert diff is None, f"{folder}/{query}\n{diff}"
    # The state carried matches in progress: some match written after the restart starts
    # with a row delivered before the stop (the first measure is the first row's id).
    ids_before = {r[0] for batch in record["before"] for r in batch}
    first_id = record.get("first_id", 1)
    assert any(r[first_id] in ids_before for r in after), after
    if late:
        kept = late_rows(spark, copy / "checkpoint").select("id", "ts").collect()
        assert [tuple(r) for r in kept] == [(r[0], r[ts]) for r in late]


def _lz4(spark):
    """Spark's LZ4 codec, which its HDFS-backed state store writes delta files with."""
    jvm = spark.sparkContext._jvm
    return jvm, jvm.org.apache.spark.io.LZ4CompressionCodec(spark.sparkContext._jsc.sc().conf())


def _read_delta(spark, delta: Path) -> bytes:
    jvm, codec = _lz4(spark)
    stream = codec.compressedInputStream(jvm.java.io.FileInputStream(str(delta)))
    data = bytes(stream.readAllBytes())
    stream.close()
    return data


def _set_state_format(spark, checkpoint: Path, old: int, new: int) -> int:
    """Rewrites the format number of every key's state in the checkpoint's state files
    (Spark's HDFS-backed state store: LZ4-compressed delta files, read and written through
    Spark's own codec); returns how many states it changed."""
    jvm, codec = _lz4(spark)
    before, after = (
        struct.pack(">ii", old, SIGNATURE_PARTS),
        struct.pack(">ii", new, SIGNATURE_PARTS),
    )
    changed = 0
    for delta in checkpoint.glob("state/*/*/*.delta"):
        data = _read_delta(spark, delta)
        changed += data.count(before)
        out = codec.compressedOutputStream(jvm.java.io.FileOutputStream(str(delta)))
        out.write(bytearray(data.replace(before, after)))
        out.close()
        delta.with_name(f".{delta.name}.crc").unlink(missing_ok=True)
    return changed


def _state_bytes(spark, checkpoint: Path) -> bytes:
    """The uncompressed bytes of the checkpoint's state files (Spark's HDFS-backed store)."""
    return b"".join(_read_delta(spark, d) for d in sorted(checkpoint.glob("state/*/*/*.delta")))


def test_the_trees_per_key_fixtures_hold_keys_moving_between_trees(spark):
    """What the trees-per-key fixtures restore is a state with each key's place among its
    trees in it: the section's tag, in the states of both keys (p and q) at least; the later
    ones with the pairs' counts after it, the earlier one without; the latest with the
    position from which the leaves kept their rows, the ones before it without."""
    before = _state_bytes(spark, FIXTURES / "trees-per-key" / "any_match" / "checkpoint")
    assert before.count(b"PKEY") >= 2, before.count(b"PKEY")
    assert b"PAIR" not in before
    after = _state_bytes(spark, FIXTURES / "trees-per-key-pairs" / "any_match" / "checkpoint")
    assert after.count(b"PKEY") >= 2, after.count(b"PKEY")
    assert after.count(b"PAIR") == after.count(b"PKEY")
    assert b"LEAF" not in after
    for query in ("any_match", "any_match_sequence"):
        sequence = _state_bytes(spark, FIXTURES / "trees-per-key-sequence" / query / "checkpoint")
        assert sequence.count(b"PKEY") >= 2 and b"LEAF" not in sequence, query
        leaves = _state_bytes(spark, FIXTURES / "trees-per-key-leaves" / query / "checkpoint")
        assert leaves.count(b"PKEY") >= 2, query
        assert leaves.count(b"LEAF") == leaves.count(b"PKEY"), query


def test_a_state_of_an_unknown_format_is_refused(spark, tmp_path):
    record, copy = _copy(FIXTURES / "format-5" / "any_match", tmp_path)
    assert _set_state_format(spark, copy / "checkpoint", 5, 99) > 0
    with pytest.raises(Exception) as failure:
        _restart(spark, record, copy, tmp_path)
    message = str(failure.value)
    assert (
        "MATCH_RECOGNIZE state of format 99, which this version of spark-match-recognize "
        "does not read" in message
    ), message[:2000]
    assert "Restart the query with a new checkpoint location" in message, message[:2000]
