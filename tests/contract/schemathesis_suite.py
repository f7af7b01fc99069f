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
from typing import Any

import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "60"))


def required_body_fields(app: Flask) -> dict[tuple[str, str], frozenset[str]]:
    """The required top-level fields of each operation's request body, by (method, path)."""
    document = app.extensions["api"].spec.to_dict()
    components = document["components"]["schemas"]
    found: dict[tuple[str, str], frozenset[str]] = {}
    for path, item in document["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "requestBody" in op:
                body = op["requestBody"]["content"]["application/json"]["schema"]
                named = components[body["$ref"].rsplit("/", 1)[-1]] if "$ref" in body else body
                found[(method.upper(), path)] = frozenset(named.get("required", ()))
    return found


def incomplete_link_body(case: schemathesis.Case, required: dict[tuple[str, str], frozenset[str]]) -> bool:
    """Whether a stateful step sends a body missing a required field. The links give each
    body field as a `body.<field>` parameter (openapi.yaml's links: openapi-generator
    refuses a link's object `requestBody`), and Schemathesis applies each parameter by a
    coin flip and sends the applied ones as the whole body, uncompleted: such a body is
    schema-invalid data, which the service rightly refuses with 400, not valid data."""
    needed = required.get((case.method.upper(), case.path), frozenset())
    return isinstance(case.body, dict) and not needed <= set(case.body)


def contract_suite(app: Flask) -> tuple[Callable[..., None], type]:
    """The suite against ``app``: the fuzzing test and the stateful test case, for a test
    module to bind to names pytest collects (``test_...``, ``Test...``)."""
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)

    @schema.parametrize()
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def test_contract(case: schemathesis.Case) -> None:
        case.call_and_validate()

    required = required_body_fields(app)

    class Chains(schema.as_state_machine()):  # type: ignore[misc]
        def validate_response(self, response: Any, case: schemathesis.Case, additional_checks: Any = None, **kwargs: Any) -> None:
            """Every check, but a link body Schemathesis left incomplete is not judged as
            valid data (see :func:`incomplete_link_body`)."""
            excluded = [positive_data_acceptance] if incomplete_link_body(case, required) else []
            case.validate_response(response, additional_checks=additional_checks, excluded_checks=excluded, transport_kwargs=kwargs or None)

    class StatefulChains(Chains.TestCase):  # type: ignore[misc]
        settings = settings(
            max_examples=max(10, EXAMPLES // 2),
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )

    return test_contract, StatefulChains


__all__ = ["EXAMPLES", "contract_suite"]
