"""Control (must pass): another STUB_PREFIX and stub template, with the run's length and the first
copy's place ('<<lam-dup n=3 first=r0:1>>'): the suite checks only that stubs start with the
declared prefix (SPEC §15)."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'different STUB_PREFIX and stub template'


class OtherStub(Base2):
    STUB_PREFIX = "<<lam-dup "

    def stub(self, count):
        return f"{self.STUB_PREFIX}n={count}>>"


export(OtherStub(), globals())
