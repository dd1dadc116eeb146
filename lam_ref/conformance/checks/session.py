"""Checks of the area ``session``: the online session's save format version 1 (SPEC §6.3; profile
``session-v1``, claim ONLINE).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from ...strategies import embeddings_and_threshold
from ..asserts import accepts, as_pi, assert_equal_pi, expect_value_error, expected_pi, two_inputs
from ..harness import Context, check


@check("session.v1_roundtrip", claim="ONLINE",
       spec="§6.3 a saved session restores (own reader and lam_ref's v1 reader) and decides as if it never stopped",
       parts=("substitute", "online", "session"), profiles=("session-v1",), shown_to_fail_on=("m45_session_restarts",))
def check_session_v1_roundtrip(impl: Any, ctx: Context) -> None:
    """Save after some turns, restore, continue: equal to the batch π; the file is save format v1
    (lam_ref's reader restores it too, and the implementation restores lam_ref's files); a cut file is refused."""
    from ...online import OnlineSession as RefSession

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        n = e.shape[0]
        half = n // 2
        want, source = expected_pi(impl, e, t)
        with tempfile.TemporaryDirectory(prefix="lam-session-") as tmp:
            path = os.path.join(tmp, "s.lamsession")
            session = impl.online_session(t)
            first = as_pi(session.admit(e[:half]), half, "admit before saving")
            impl.session_save(session, path)
            restored = accepts(lambda: impl.session_load(path, t), "session_load of the implementation's own save")
            rest = as_pi(restored.admit(e[half:]), n - half, "admit after session_load")
            assert_equal_pi(np.concatenate([first, rest]), want, "save, restore, continue", source)
            ref = accepts(lambda: RefSession.load(path, t=t), "lam_ref's v1 reader on the implementation's save file")
            rest_ref = ref.admit(e[half:]).pi
            assert np.array_equal(rest_ref, want[half:]) or not impl.complete, (
                "lam_ref's reader restored the implementation's file but continued differently (SPEC §6.3 save format v1)"
            )
            theirs = RefSession(t, exhaustive=True)
            theirs.admit(e[:half])
            other = os.path.join(tmp, "ref.lamsession")
            theirs.save(other)
            mine = accepts(lambda: impl.session_load(other, t), "session_load of a file lam_ref wrote (save format v1)")
            cont = as_pi(mine.admit(e[half:]), n - half, "admit after loading lam_ref's file")
            if impl.complete:
                assert_equal_pi(cont, want[half:], "continuing a session lam_ref saved", source)
            with open(path, "rb") as fh:
                data = fh.read()
            cut = os.path.join(tmp, "cut.lamsession")
            with open(cut, "wb") as fh:
                fh.write(data[: len(data) // 2])
            expect_value_error(lambda: impl.session_load(cut, t), "session_load of a save file cut in half (SPEC §6.3)")

    fixed = two_inputs()[0]
    ctx.note({"embeddings": fixed[0], "t": fixed[1]})
    body(fixed)  # a fixed case first: distinct rows on both sides of the save
    ctx.run(embeddings_and_threshold(min_n=2, max_n=24, min_dim=2, max_dim=8, min_t=0.8, max_t=0.99), body, examples=6)
