"""Shared fixtures: the app under test and its client."""

from __future__ import annotations

import pytest

from service.http import create_app
from service.http.config import TestConfig


@pytest.fixture(scope="session")
def app():
    return create_app(TestConfig())


@pytest.fixture()
def client(app):
    return app.test_client()
