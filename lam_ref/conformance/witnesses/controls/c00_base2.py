"""Control: the second mutant skeleton (:class:`~lam_ref.conformance.witnesses.mutants._base2.Base2`)
exported unchanged; every mutant m46 onwards differs from it by one hook, so it must pass."""

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = "the port-style skeleton itself: grid index, float64 buffer, codec byte format version 1"
NAME = "mutant skeleton 2 (correct)"
export(Base2(), globals())
