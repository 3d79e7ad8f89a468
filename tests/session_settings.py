"""Session settings for the length of a ``with`` block, for tests that change conf keys on
the shared session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def settings(spark, confs: dict[str, str]) -> Iterator[None]:
    """`confs` set on the session, and restored (or unset) afterwards."""
    previous = {key: spark.conf.get(key, None) for key in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
