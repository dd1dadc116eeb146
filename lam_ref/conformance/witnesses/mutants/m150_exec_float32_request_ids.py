"""Mutant (exec server): the request id is held in a 32-bit float (a JavaScript ``Float32Array``
slot, a C ``float`` field), so a reply to a request id past 2²⁴ carries a rounded id
(docs/conformance.md §6: the reply's id is the request's, exactly)."""

from __future__ import annotations

import sys

import numpy as np

from ._exec import ServerState, exec_command, serve

BUG = "request ids held in float32: ids past 2^24 come back rounded"
VIOLATES = "DEF1"
CLASS = "integer width"
IDIOM = "JavaScript: const ids = new Float32Array(queue); ids[k] = msg.id"
NEEDS = "request ids past 2^24 (exec)"
CAUGHT_BY: tuple[str, ...] = ("substitute.request_ids",)
EXEC = exec_command(__name__)


class Float32Ids(ServerState):
    def reply_id(self, rid):
        return int(np.float32(rid)) if isinstance(rid, int) else rid


if __name__ == "__main__":
    sys.exit(serve(Float32Ids))
