"""A per-process cache sized in bytes, not entries: compiled contracts and solved tables range from kilobytes to
several megabytes, so a count of entries bounds neither a long run's memory nor its hit rate."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import numpy as np
from pydantic import BaseModel

T = TypeVar("T")


def array_bytes(value, seen: set[int] | None = None) -> int:
    """The bytes of the numpy arrays `value` holds, through pydantic fields, tuples, lists and dicts: what
    such a value costs in memory beyond a few hundred bytes of Python objects."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, BaseModel):
        return sum(array_bytes(getattr(value, name), seen) for name in type(value).model_fields)
    if isinstance(value, (tuple, list)):
        return sum(array_bytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(array_bytes(v, seen) for v in value.values())
    return 0


class ByteLru(Generic[T]):
    """`make(*key)` kept for the keys asked for most recently, while their values' arrays come to at most
    `max_bytes` (the newest is kept even if it alone is larger). Thread-safe: one lock, held while a value is
    made, so a value threads ask for at once is made once, and makes never overlap (a DP solve's compiled
    kernels must not be entered from two threads at once)."""

    def __init__(self, make: Callable[..., T], max_bytes: int):
        self._make, self.max_bytes = make, max_bytes
        self._values: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self._lock = threading.RLock()
        self.bytes = 0
        self.hits = 0

    def __call__(self, *key) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self.hits += 1
                return self._values[key][0]
            value = self._make(*key)
            size = array_bytes(value)
            self._values[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes and len(self._values) > 1:
                _, (_, dropped) = self._values.popitem(last=False)
                self.bytes -= dropped
            return value
