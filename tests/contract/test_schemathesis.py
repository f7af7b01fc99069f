"""The contract, fuzzed in open mode: schemathesis against the real app, every check, plus
stateful chains through the OpenAPI links (tests/contract/schemathesis_suite.py).

``SCHEMATHESIS_EXAMPLES`` (default 60) sets the examples per operation. Marked slow (about
a minute): ``make test-quick`` skips it, ``make test`` runs it.
"""

from __future__ import annotations

import pytest

from service.http import create_app
from tests.app_settings import settings_for_tests
from tests.contract.schemathesis_suite import contract_suite

pytestmark = pytest.mark.slow

test_contract, TestStatefulChains = contract_suite(create_app(settings_for_tests()))
