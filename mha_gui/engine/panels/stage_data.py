"""StageData adapters: what `describe_stage` and the views read numbers from when the
source is not the window's Document — an engine Session (the command line) or explicit
numbers frozen for a worker thread."""

from __future__ import annotations

import numpy as np

from mha_gui.engine.attention.trace import head_contribution
from mha_gui.engine.layer.config import Config


class TraceData:
    """StageData over explicit numbers: a config, tokens, parameters and a trace (what a
    worker thread reads while the document keeps the trace still)."""

    def __init__(self, config: Config, tokens: list[str], params, trace):
        self.config, self.tokens, self._params, self._trace = config, list(tokens), params, trace

    def matrix(self, name: str) -> np.ndarray:
        return self._params.as_dict()[name]

    def trace(self):
        return self._trace

    def contribution(self, head: int) -> np.ndarray:
        return head_contribution(self._trace.heads[head], self._trace.w_o, head)


class SessionData:
    """StageData over an engine Session (and optionally a trace already computed)."""

    def __init__(self, session, trace=None):
        self.session = session
        self.config = session.config
        self.tokens = list(session.tokens)
        self._trace = trace

    def matrix(self, name: str) -> np.ndarray:
        return self.session.params.as_dict()[name]

    def trace(self):
        if self._trace is None:
            self._trace = self.session.run()
        return self._trace

    def contribution(self, head: int) -> np.ndarray:
        return self.trace().contributions[head]
