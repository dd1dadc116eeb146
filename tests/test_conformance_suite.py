"""The conformance suite (``lam_ref.conformance.suite``) run by ``make test``: collected once, here.

``testpaths`` does not reach into the package, so these imports are the only place pytest finds
the suite's tests. They check the implementation named by ``--lam-impl`` / ``$LAM_IMPL``; the
repository's ``conftest.py`` chooses lam_ref's own exhaustive adapter (``lam_ref.conformance.adapter``)
when neither is given, since the plugin itself refuses to run without a choice.
"""

from lam_ref.conformance.suite.test_codec import test_codec
from lam_ref.conformance.suite.test_lines import test_lines
from lam_ref.conformance.suite.test_more import test_more
from lam_ref.conformance.suite.test_online import test_online
from lam_ref.conformance.suite.test_substitute import test_substitute
from lam_ref.conformance.suite.test_validation import test_validation

__all__ = ["test_codec", "test_lines", "test_more", "test_online", "test_substitute", "test_validation"]
