"""Control (must pass): refuses bad input with its own ValueError subclass and its own wording (SPEC
§2.3 asks for a ValueError naming the argument and the value, not for lam_ref's text)."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'own ValueError subclass and messages'


class MyError(ValueError):
    pass


class OwnErrors(Base2):
    def check_rows(self, embeddings, name, dim=None):
        try:
            return super().check_rows(embeddings, name, dim)
        except ValueError as exc:
            raise MyError(f"invalid input -- {exc}") from None

    def check_t(self, t):
        try:
            return super().check_t(t)
        except ValueError as exc:
            raise MyError(f"invalid input -- {exc}") from None


export(OwnErrors(), globals())
