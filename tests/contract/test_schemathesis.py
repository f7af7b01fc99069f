"""The contract, fuzzed: schemathesis against the real app, every check, plus stateful
chains through the OpenAPI links (a deal's state and legal move feed the moves endpoint).

``SCHEMATHESIS_EXAMPLES`` (default 60) sets the examples per operation.
"""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, settings

from service.http import create_app
from service.http.config import ConfigForTests

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "60"))

schema = schemathesis.openapi.from_wsgi("/openapi.json", create_app(ConfigForTests()))


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
