"""The contract, fuzzed: schemathesis against the real app, every check, plus stateful
chains through the OpenAPI links (a deal's state and legal move feed the moves endpoint).

``SCHEMATHESIS_EXAMPLES`` (default 60) sets the examples per operation. Marked slow (about
a minute): ``make test-quick`` skips it, ``make test`` runs it.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from service.http import create_app
from tests.app_settings import settings_for_tests

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "60"))

schema = schemathesis.openapi.from_wsgi("/openapi.json", create_app(settings_for_tests()))


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_contract(case: schemathesis.Case) -> None:
    case.call_and_validate()


Workflow = schema.as_state_machine()


class TestStatefulChains(Workflow.TestCase):  # type: ignore[name-defined,misc]
    settings = settings(
        max_examples=max(10, EXAMPLES // 2),
        stateful_step_count=8,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
