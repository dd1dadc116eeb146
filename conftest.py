"""Repository-wide pytest configuration: Hypothesis profiles (``ci`` is the default of ``make test``),
and the implementation lam_ref's own test run checks with the conformance suite.

The conformance plugin has no silent default (issue 20 item 8: with nothing chosen it refuses to
run), so lam_ref's own suite chooses explicitly: its exhaustive adapter, unless ``--lam-impl`` or
``LAM_IMPL`` picks another."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=10, deadline=None, database=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: What ``make test`` checks with the conformance suite (tests/conformance/test_suite.py).
OWN_IMPL = "lam_ref.conformance.adapter"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "claim(id): the paper claim a test checks")
    if getattr(config.option, "lam_impl", "absent") is None and not os.environ.get("LAM_IMPL"):
        config.option.lam_impl = OWN_IMPL
