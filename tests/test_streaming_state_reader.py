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
    """A standard-semantics key state's value (format 8) read by the layout
    docs/streaming.md gives; its released rows are map-state entries by position."""
    state = _Bytes(value)
    take = state.take
    (version,) = take(">i")
    (parts,) = take(">i")
    take(f">{parts}q")  # the query's signature: a digest per part
    base, resume_at, matches_before, written_up_to, end = take(">5q")
    (waiting,) = take(">i")
    for _ in range(waiting):
        (size,) = take(">i")
        state.skip(size)  # the row, as Spark's UnsafeRow bytes
    state.end()
    return {"format": version, "base": base, "resume_at": resume_at, "end": end, "waiting": waiting}


def test_sparks_state_reader_reads_the_state_by_its_documented_layout(spark, tmp_path):
    """``spark.read.format("statestore")`` reads the value state ``match_recognize``: a row
    per PARTITION BY key, its bytes in the layout docs/streaming.md documents; and the map
    state ``held_rows``: the rows each call released in one entry, keyed by the position of
    its first row, together exactly the positions the value says a match may still read."""
    rows = test_streaming._walk_rows(60, ["a", "b"], random.Random(7))
    checkpoint = _stopped_stream(spark, tmp_path, [rows[:30], rows[30:]], test_streaming.V_SHAPE)

    def read(name: str):
        state = spark.read.format("statestore").option("stateVarName", name)
        return state.load(str(checkpoint)).collect()

    state = read("match_recognize")
    assert sorted(r.key.part for r in state) == ["a", "b"]
    decoded = {r.key.part: _standard_state(bytes(r.value.value)) for r in state}
    assert {d["format"] for d in decoded.values()} == {8}
    # The last rows wait for the watermark (5 s behind the last event).
    assert sum(d["waiting"] for d in decoded.values()) > 0, decoded
    entries = read("held_rows")
    for part, d in decoded.items():
        counts = {}
        for r in entries:
            if r.key.part == part:
                entry = _Bytes(bytes(r.user_map_value.value))
                (count,) = entry.take(">i")
                for _ in range(count):
                    (size,) = entry.take(">i")
                    assert size % 8 == 0  # an UnsafeRow: 8-byte words
                    entry.skip(size)
                entry.end()
                counts[r.user_map_key.value] = count
        starts = sorted(counts)
        # Each entry's rows end where the next one's begin; the last one's at `end`.
        following = starts[1:]
        assert all(a + counts[a] == b for a, b in zip(starts[:-1], following, strict=True)), (
            part,
            counts,
        )
        if d["end"] > d["base"]:
            assert starts[0] <= d["base"] < starts[0] + counts[starts[0]], (part, d, counts)
            assert starts[-1] + counts[starts[-1]] == d["end"], (part, d, counts)
        assert d["base"] <= d["resume_at"] <= d["end"], (part, d)
    assert entries, "the keys hold rows a match may still read"
    assert read("partial_matches") == [], "standard semantics keep no partial match"


def _any_match_state(value: bytes) -> dict:
    """A SKIP TILL ANY MATCH key state's value (format 7) read by the layout
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
    (section,) = take(">4s")
    per_key = None
    if section == b"PKEY":
        # Trees per key: digest of the trees, tree run, tree left, emitBefore, retireAfter,
        # tree to move to; the rates: variables, buckets, per bucket rows, first position and
        # a count per variable; bucket filling, rows read, last two positions.
        _digest, tree, retiring, _before, _after, move_to = take(">qiiqqi")
        variables, buckets = take(">2i")
        for _ in range(buckets):
            take(f">2q{variables}q")
        take(">i3q")
        per_key = {"tree": tree, "retiring": retiring, "move_to": move_to, "pairs": 0}
        (section,) = take(">4s")
        if section == b"PAIR":
            # Pairs of variables measured: a count, per bucket those tested then passed.
            (pairs,) = take(">i")
            for _ in range(buckets):
                take(f">{2 * pairs}q")
            per_key["pairs"] = pairs
            (section,) = take(">4s")
        if section == b"LEAF":
            # The position from which the tree run kept every leaf's rows.
            (per_key["leaves_from"],) = take(">q")
            (section,) = take(">4s")
        assert section == b"END.", f"section END. expected at {state.at - 4}"
    else:
        assert section == b"END.", f"section END. expected at {state.at - 4}"
    state.end()
    return {
        "format": version,
        "saves": saves,
        "next_row_id": next_row_id,
        "waiting": waiting,
        "spans": spans,
        "held_rows": held_rows,
        "per_key": per_key,
    }


def _call_entry(data: bytes) -> tuple[range, list[tuple[int, int, int, list[list[int]]]]]:
    """A ``partial_matches`` value (what one call added): the ids of its rows, and its
    parts: (tree state, node, first match number, each match's row ids)."""
    entry = _Bytes(data)
    take = entry.take
    first_row, rows = take(">qi")
    for _ in range(rows):
        _fields, size = take(">2i")
        entry.skip(size)
    parts = []
    (count,) = take(">i")
    for _ in range(count):
        tree, node, start, matches = take(">iiqi")
        ids = []
        for _ in range(matches):
            (width,) = take(">i")
            ids.append(list(take(f">{width}q")))
            take(">4q")  # lo, hi, first and last order
        parts.append((tree, node, start, ids))
    entry.end()
    return range(first_row, first_row + rows), parts


def test_sparks_state_reader_reads_any_match_state_entry_by_entry(spark, tmp_path):
    """A SKIP TILL ANY MATCH key keeps what each call added (the partial matches and the
    rows they hold) as one entry of the map state ``partial_matches`` beside its value state:
    the entries hold every match the value's buffers count, and every row those matches and
    the held ones hold; no entry is kept of which no match is buffered and no row held."""
    rows = test_streaming._walk_rows(80, ["a", "b"], random.Random(11))
    batches = [rows[:30], rows[30:55], rows[55:]]
    checkpoint = _stopped_stream(spark, tmp_path, batches, test_streaming_any_match.SEQUENCE)

    def read(name: str):
        state = spark.read.format("statestore").option("stateVarName", name)
        return state.load(str(checkpoint)).collect()

    values = {r.key.part: _any_match_state(bytes(r.value.value)) for r in read("match_recognize")}
    assert sorted(values) == ["a", "b"]
    assert {v["format"] for v in values.values()} == {7}
    # A B C may run trees per key: each key is on its first tree, too few rows for a choice.
    assert [v["per_key"]["tree"] for v in values.values()] == [0, 0], values
    # A B C relates A to B and B to C: both pairs measured.
    assert [v["per_key"]["pairs"] for v in values.values()] == [2, 2], values
    # Keys that ran one tree from their first row have kept their leaves' rows from it.
    assert [v["per_key"]["leaves_from"] for v in values.values()] == [-(2**63)] * 2, values
    entries = read("partial_matches")
    assert read("held_rows") == [], "format 7 keeps rows in the entries of partial_matches"
    buffered_total = 0
    for part, value in values.items():
        mine = [_call_entry(bytes(r.user_map_value.value)) for r in entries if r.key.part == part]
        assert all(r.user_map_key.value < value["saves"] for r in entries if r.key.part == part)
        held, buffered, ids = set(value["held_rows"]), 0, set()
        live_parts = []
        for row_ids, parts in mine:
            ids |= set(row_ids)
            live = []
            for tree, node, start, matches in parts:
                first, following = value["spans"][(tree, node)]
                live += [m for i, m in enumerate(matches) if first <= start + i < following]
            buffered += len(live)
            held |= {i for m in live for i in m if i != -1}
            live_parts.append(bool(live))
        assert buffered == sum(b - a for a, b in value["spans"].values()), (part, value)
        buffered_total += buffered
        for (row_ids, _), has_live in zip(mine, live_parts, strict=True):
            assert has_live or set(row_ids) & held, f"{part}: an entry with nothing live is kept"
        assert held <= ids and max(ids) < value["next_row_id"], (part, value)
    assert buffered_total > 0, values
