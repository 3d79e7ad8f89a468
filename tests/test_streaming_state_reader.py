"""Spark's state reader (``spark.read.format("statestore")``) over a streaming
MATCH_RECOGNIZE's checkpoint in transformWithState: each key's state read by the layout
docs/streaming.md documents, value and entries."""

from __future__ import annotations

import random
import struct

import pytest

import test_streaming
import test_streaming_any_match
from test_streaming_transform_with_state import transform_with_state  # noqa: F401

pytestmark = pytest.mark.usefixtures("transform_with_state")


def _standard_state(value: bytes) -> dict:
    """A standard-semantics key state (format 2) read by the layout docs/streaming.md gives."""
    at = 0

    def take(fmt: str):
        nonlocal at
        values = struct.unpack_from(fmt, value, at)
        at += struct.calcsize(fmt)
        return values

    (version,) = take(">i")
    (parts,) = take(">i")
    take(f">{parts}q")  # the query's signature: a digest per part
    base, resume_at, matches_before, written_up_to = take(">4q")
    rows = {}
    for name in ("released", "waiting"):
        (count,) = take(">i")
        for _ in range(count):
            (size,) = take(">i")
            at += size  # the row, as Spark's UnsafeRow bytes
        rows[name] = count
    assert at == len(value), f"{len(value) - at} bytes left after the documented layout"
    return {"format": version, "base": base, "resume_at": resume_at, **rows}


def test_sparks_state_reader_reads_the_state_by_its_documented_layout(spark, tmp_path):
    """``spark.read.format("statestore")`` reads the value state ``match_recognize``: a row
    per PARTITION BY key, its bytes in the layout docs/streaming.md documents."""
    rows = test_streaming._walk_rows(60, ["a", "b"], random.Random(7))
    checkpoint = tmp_path / "checkpoint"
    test_streaming.run_stream(
        spark,
        tmp_path,
        test_streaming.SCHEMA,
        test_streaming.COLUMNS,
        [rows[:30], rows[30:]],
        test_streaming.V_SHAPE,
        checkpoint=checkpoint,
    )
    state = (
        spark.read.format("statestore")
        .option("stateVarName", "match_recognize")
        .load(str(checkpoint))
        .collect()
    )
    assert sorted(r.key.part for r in state) == ["a", "b"]
    decoded = [_standard_state(bytes(r.value.value)) for r in state]
    assert {d["format"] for d in decoded} == {2}
    # The last rows wait for the watermark (5 s behind the last event).
    assert sum(d["waiting"] for d in decoded) > 0, decoded


def _any_match_state(value: bytes) -> dict:
    """A SKIP TILL ANY MATCH key state's value (format 6) read by the layout
    docs/streaming.md gives; its partial matches and their rows are map-state entries."""
    at = 0

    def take(fmt: str):
        nonlocal at
        values = struct.unpack_from(fmt, value, at)
        at += struct.calcsize(fmt)
        return values

    def tag(name: str):
        assert take(">4s")[0] == name.encode(), f"section {name} expected at {at - 4}"

    def row_list():
        (count,) = take(">i")
        take(f">{count}i")  # indices into the value's own rows
        return count

    (version,) = take(">i")
    (parts,) = take(">i")
    take(f">{parts}q")  # the query's signature
    tag("ENTS")
    saves, next_row_id = take(">2q")
    tag("ROWS")
    (rows,) = take(">i")
    for _ in range(rows):
        _fields, size = take(">2i")
        at += size
    tag("KEYS")
    waiting = row_list()
    take(">qiq")  # the window's progress: rows passed on, last ORDER BY row, its rank
    row_list(), row_list(), row_list()  # recent, pending, matches waiting for a number
    take(">q")  # matches numbered
    row_list()  # ids of bindings written
    (written_until,) = take(">i")
    take(f">{written_until}q")
    tag("TREE")
    buffered, held = 0, 0
    (trees,) = take(">i")
    for _ in range(trees):
        (nodes,) = take(">i")
        for _ in range(nodes):
            first, following = take(">2q")
            buffered += following - first
        (held_here,) = take(">i")
        for _ in range(held_here):
            (width,) = take(">i")
            take(f">{width}q4q")  # row ids (-1: none); lo, hi, first and last order
        held += held_here
        take(f">4q{2 * nodes}q")  # counters; created and peak per node
    tag("END.")
    assert at == len(value), f"{len(value) - at} bytes left after the documented layout"
    return {
        "format": version,
        "saves": saves,
        "next_row_id": next_row_id,
        "waiting": waiting,
        "buffered": buffered,
        "held": held,
    }


def test_sparks_state_reader_reads_any_match_state_entry_by_entry(spark, tmp_path):
    """A SKIP TILL ANY MATCH key keeps its partial matches and their rows as entries of
    the map states ``partial_matches`` and ``held_rows``, beside its value state: the
    reader finds per key as many partial-match entries as the value's buffers count, each
    row a match holds once, and nothing a match no longer holds."""
    rows = test_streaming._walk_rows(80, ["a", "b"], random.Random(11))
    checkpoint = tmp_path / "checkpoint"
    test_streaming.run_stream(
        spark,
        tmp_path,
        test_streaming.SCHEMA,
        test_streaming.COLUMNS,
        [rows[:30], rows[30:55], rows[55:]],
        test_streaming_any_match.SEQUENCE,
        checkpoint=checkpoint,
    )

    def read(name: str):
        state = spark.read.format("statestore").option("stateVarName", name)
        return state.load(str(checkpoint)).collect()

    values = {r.key.part: _any_match_state(bytes(r.value.value)) for r in read("match_recognize")}
    assert sorted(values) == ["a", "b"]
    assert {v["format"] for v in values.values()} == {6}
    matches, held_rows = read("partial_matches"), read("held_rows")
    for part, value in values.items():
        entries = [r for r in matches if r.key.part == part]
        assert len(entries) == value["buffered"], (part, value)
        row_ids = {r.user_map_key.value for r in held_rows if r.key.part == part}
        assert row_ids and max(row_ids) < value["next_row_id"], (part, value)
        # Every row a partial match holds is there, and no other.
        held = set()
        for entry in entries:
            data = bytes(entry.user_map_value.value)
            (width,) = struct.unpack_from(">i", data, 0)
            held |= {i for i in struct.unpack_from(f">{width}q", data, 4) if i != -1}
        assert held <= row_ids and (value["held"] > 0 or held == row_ids), (part, held, row_ids)
    assert sum(v["buffered"] for v in values.values()) > 0, values
