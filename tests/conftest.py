"""Shared fixtures: the app under test (built with the tests' settings) and its client."""

from __future__ import annotations

import pytest

from service.http import create_app
from tests.app_settings import settings_for_tests


@pytest.fixture(scope="session")
def app():
    app = create_app(settings_for_tests())
    app.testing = True
    return app


@pytest.fixture()
def client(app):
    return app.test_client()
