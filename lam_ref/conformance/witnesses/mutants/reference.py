"""The mutants' shared skeleton exported unchanged: a correct SPEC §15 implementation.

Every mutant differs from this module by one hook; the meta-tests require this one to pass the
whole suite, so that a mutant's failure is caused by its bug alone.
"""

from ._base import Base, export

NAME = "mutant skeleton (correct)"
export(Base(), globals())
