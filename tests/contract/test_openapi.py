"""The committed openapi.yaml is exactly what the schemas generate (regenerate with
`make openapi`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from service.http import create_app

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_yaml_matches_the_schemas() -> None:
    generated = create_app().extensions["api"].spec.to_dict()
    committed = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    assert committed == generated, "openapi.yaml drifted from the schemas: run `make openapi` and commit it"


def test_every_operation_documents_its_errors_as_problem_json() -> None:
    spec = create_app().extensions["api"].spec.to_dict()
    responses = spec["components"]["responses"]
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            assert op.get("operationId"), f"{method} {path} has no operationId"
            for status, resp in op["responses"].items():
                if int(status) >= 400:
                    ref = resp["$ref"].rsplit("/", 1)[-1]
                    assert "application/problem+json" in responses[ref]["content"]
                    assert responses[ref]["content"]["application/problem+json"].get("example"), ref
            if method == "post":
                assert "400" in op["responses"], f"{method} {path} does not document 400"
