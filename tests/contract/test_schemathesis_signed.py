"""The contract, fuzzed in signed mode (``STATE_PROTECTION=signed``): schemathesis against
the real app with a key ring, every check, plus stateful chains through the OpenAPI links
(a deal's signed state feeds the moves, legal-moves and validate endpoints, so signed
states are played, not only refused).

Generated states carry no signature the server made, so they get 403 (declared in
schemathesis.toml as an expected status of schema-valid data). ``SCHEMATHESIS_EXAMPLES``
(default 60) sets the examples per operation. Marked slow, like test_schemathesis.py.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from service.http import create_app
from tests.app_settings import signed_settings_for_tests

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "60"))

schema = schemathesis.openapi.from_wsgi("/openapi.json", create_app(signed_settings_for_tests()))


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_contract_signed(case: schemathesis.Case) -> None:
    case.call_and_validate()


Workflow = schema.as_state_machine()


class TestSignedStatefulChains(Workflow.TestCase):  # type: ignore[name-defined,misc]
    settings = settings(
        max_examples=max(10, EXAMPLES // 2),
        stateful_step_count=8,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
