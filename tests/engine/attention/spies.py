"""A spy for the engine's tests: a function that notes each call, then does the real one."""

from __future__ import annotations


def counted(real, record, calls: list):
    """`real`, noting `record(kwargs)` in `calls` at each call."""

    def spy(*args, **kwargs):
        calls.append(record(kwargs))
        return real(*args, **kwargs)

    return spy
