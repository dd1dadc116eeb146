"""The conformance suite (``lam_ref.conformance.suite``) run by ``make test``: collected once, here.

``testpaths`` does not reach into the package, so these imports are the only place pytest finds
the suite's tests. They check the implementation named by ``--lam-impl`` / ``$LAM_IMPL``; the
repository's ``conftest.py`` chooses lam_ref's own exhaustive adapter (``lam_ref.conformance.adapter``)
when neither is given, since the plugin itself refuses to run without a choice.
"""

from lam_ref.conformance.suite.test_checks import test_check

__all__ = ["test_check"]
