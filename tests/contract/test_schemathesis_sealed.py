"""The contract, fuzzed in sealed mode (``STATE_PROTECTION=sealed``): schemathesis against
the real app with a key ring, every check, plus stateful chains through the OpenAPI links
(a deal's state feeds the moves, legal-moves and validate endpoints, so sealed-mode states
are played, not only refused: sealed, their stock a count, in the games that keep
secrets; plain signed states in the others): :mod:`.schemathesis_suite`.

Generated states carry no signature the server made, so they get 403 (declared in
schemathesis.toml as an expected status of schema-valid data). ``SCHEMATHESIS_EXAMPLES``
(default 60) sets the examples per operation. Marked slow, like test_schemathesis.py.
"""

from __future__ import annotations

import pytest

from service.http import create_app
from tests.app_settings import sealed_settings_for_tests
from tests.contract.schemathesis_suite import contract_suite

pytestmark = pytest.mark.slow

test_contract_sealed, TestSealedStatefulChains = contract_suite(create_app(sealed_settings_for_tests()))
