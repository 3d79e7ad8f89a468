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


class _Bytes:
    """Reads big-endian fields off a state's bytes, in order."""

    def __init__(self, value: bytes):
        self.value, self.at = value, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self.value, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def skip(self, size: int) -> None:
        self.at += size

    def end(self) -> None:
        left = len(self.value) - self.at
        assert left == 0, f"{left} bytes left after the documented layout"


def _stopped_stream(spark, tmp_path, batches: list, sql: str):
    """Runs `sql` over the batches; returns its checkpoint."""
    checkpoint = tmp_path / "checkpoint"
    schema, columns = test_streaming.SCHEMA, test_streaming.COLUMNS
    test_streaming.run_stream(spark, tmp_path, schema, columns, batches, sql, checkpoint=checkpoint)
    return checkpoint


def _standard_state(value: bytes) -> dict:
    """A standard-semantics key state (format 2) read by the layout docs/streaming.md gives."""
    state = _Bytes(value)
    take = state.take
    (version,) = take(">i")
    (parts,) = take(">i")
    take(f">{parts}q")  # the query's signature: a digest per part
    base, resume_at, matches_before, written_up_to = take(">4q")
    rows = {}
    for name in ("released", "waiting"):
        (count,) = take(">i")
        for _ in range(count):
            (size,) = take(">i")
            state.skip(size)  # the row, as Spark's UnsafeRow bytes
        rows[name] = count
    state.end()
    return {"format": version, "base": base, "resume_at": resume_at, **rows}


def test_sparks_state_reader_reads_the_state_by_its_documented_layout(spark, tmp_path):
    """``spark.read.format("statestore")`` reads the value state ``match_recognize``: a row
    per PARTITION BY key, its bytes in the layout docs/streaming.md documents."""
    rows = test_streaming._walk_rows(60, ["a", "b"], random.Random(7))
    checkpoint = _stopped_stream(spark, tmp_path, [rows[:30], rows[30:]], test_streaming.V_SHAPE)
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
    state = _Bytes(value)
    take = state.take

    def tag(name: str):
        assert take(">4s")[0] == name.encode(), f"section {name} expected at {state.at - 4}"

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
        state.skip(size)
    tag("KEYS")
    waiting = row_list()
    take(">qiq")  # the window's progress: rows passed on, last ORDER BY row, its rank
    row_list(), row_list(), row_list()  # recent, pending, matches waiting for a number
    take(">q")  # matches numbered
    row_list()  # ids of bindings written
    (written_until,) = take(">i")
    take(f">{written_until}q")
    tag("TREE")
    spans, held_rows = {}, set()
    (trees,) = take(">i")
    for tree in range(trees):
        (nodes,) = take(">i")
        for node in range(nodes):
            spans[(tree, node)] = take(">2q")  # the first buffered match's number, the next's
        (held,) = take(">i")
        for _ in range(held):
            (width,) = take(">i")
            held_rows |= {i for i in take(f">{width}q") if i != -1}
            take(">4q")  # lo, hi, first and last order
        take(f">4q{2 * nodes}q")  # counters; created and peak per node
    tag("END.")
    state.end()
    return {
        "format": version,
        "saves": saves,
        "next_row_id": next_row_id,
        "waiting": waiting,
        "spans": spans,
        "held_rows": held_rows,
    }


def _segment_matches(data: bytes) -> list[list[int]]:
    """A ``partial_matches`` value: each match's row ids."""
    (count,) = struct.unpack_from(">i", data, 0)
    at, matches = 4, []
    for _ in range(count):
        (width,) = struct.unpack_from(">i", data, at)
        matches.append(list(struct.unpack_from(f">{width}q", data, at + 4)))
        at += 4 + 8 * width + 32
    assert at == len(data)
    return matches


def _segment_rows(data: bytes) -> int:
    """A ``held_rows`` value: how many rows it holds."""
    (count,) = struct.unpack_from(">i", data, 0)
    at = 4
    for _ in range(count):
        _fields, size = struct.unpack_from(">2i", data, at)
        at += 8 + size
    assert at == len(data)
    return count


def test_sparks_state_reader_reads_any_match_state_entry_by_entry(spark, tmp_path):
    """A SKIP TILL ANY MATCH key keeps its partial matches and their rows in segments, the
    entries of the map states ``partial_matches`` and ``held_rows`` beside its value state:
    the segments hold every match the value's buffers count, and every row those matches
    hold; no segment is kept whose matches are all dropped, or none of whose rows is held."""
    rows = test_streaming._walk_rows(80, ["a", "b"], random.Random(11))
    batches = [rows[:30], rows[30:55], rows[55:]]
    checkpoint = _stopped_stream(spark, tmp_path, batches, test_streaming_any_match.SEQUENCE)

    def read(name: str):
        state = spark.read.format("statestore").option("stateVarName", name)
        return state.load(str(checkpoint)).collect()

    values = {r.key.part: _any_match_state(bytes(r.value.value)) for r in read("match_recognize")}
    assert sorted(values) == ["a", "b"]
    assert {v["format"] for v in values.values()} == {6}
    segments, row_segments = read("partial_matches"), read("held_rows")
    buffered_total = 0
    for part, value in values.items():
        held, buffered = set(value["held_rows"]), 0
        for entry in (r for r in segments if r.key.part == part):
            key = entry.user_map_key.value
            tree, node, start = key >> 54, (key >> 44) & 1023, key & ((1 << 44) - 1)
            first, following = value["spans"][(tree, node)]
            matches = _segment_matches(bytes(entry.user_map_value.value))
            live = [m for i, m in enumerate(matches) if first <= start + i < following]
            assert live, f"{part}: a segment whose matches were all dropped is kept"
            buffered += len(live)
            held |= {i for m in live for i in m if i != -1}
        assert buffered == sum(b - a for a, b in value["spans"].values()), (part, value)
        buffered_total += buffered
        ids = set()
        for entry in (r for r in row_segments if r.key.part == part):
            start = entry.user_map_key.value
            segment = set(range(start, start + _segment_rows(bytes(entry.user_map_value.value))))
            assert segment & held, f"{part}: a segment of rows no match holds is kept"
            ids |= segment
        assert held <= ids and max(ids) < value["next_row_id"], (part, value)
    assert buffered_total > 0, values
