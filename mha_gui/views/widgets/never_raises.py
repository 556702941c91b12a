"""A Python override that Qt calls from C++ must not raise.

With shiboken 6.11 an exception raised out of such an override (a model's `data()`
while a table paints, an item's `paint()`) is not merely printed: the binding's own
error handler can crash the process while it stores the exception (seen twice: a
graphics item's paint after a typed 1e-320, a matrix editor's `data()` after 1e308).
`@never_raises(default)` wraps such an override: an exception is reported once per
method and reason (logging) and the override returns `default` instead.
"""

from __future__ import annotations

import functools
import logging

log = logging.getLogger(__name__)


def never_raises(default=None):
    """Decorator for a Qt override: on an exception, report it once and return `default`."""

    def wrap(method):
        reported: set[str] = set()

        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:  # never out to C++: see the module's docstring
                text = f"{type(self).__name__}.{method.__name__}: {type(exc).__name__}: {exc}"
                if text not in reported:
                    reported.add(text)
                    log.error("a Qt override failed: %s", text, exc_info=exc)
                return default

        return guarded

    return wrap
