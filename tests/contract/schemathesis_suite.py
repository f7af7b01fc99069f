"""The schemathesis contract suite of one app, shared by the contract tests of the three
protection modes (tests/contract/test_schemathesis.py, test_schemathesis_signed.py,
test_schemathesis_sealed.py): every operation fuzzed with every check, plus stateful
chains through the OpenAPI links
(a deal's state feeds the moves, legal-moves and validate endpoints, so protected states
are played, not only refused).

``SCHEMATHESIS_EXAMPLES`` (default 60) sets the examples per operation.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "60"))


def contract_suite(app: Flask) -> tuple[Callable[..., None], type]:
    """The suite against ``app``: the fuzzing test and the stateful test case, for a test
    module to bind to names pytest collects (``test_...``, ``Test...``)."""
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)

    @schema.parametrize()
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def test_contract(case: schemathesis.Case) -> None:
        case.call_and_validate()

    class StatefulChains(schema.as_state_machine().TestCase):  # type: ignore[misc]
        settings = settings(
            max_examples=max(10, EXAMPLES // 2),
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )

    return test_contract, StatefulChains


__all__ = ["EXAMPLES", "contract_suite"]
