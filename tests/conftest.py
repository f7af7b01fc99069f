"""Shared fixtures: the app under test and its client."""

from __future__ import annotations

import pytest

from service.http import create_app
from service.http.config import ConfigForTests


@pytest.fixture(scope="session")
def app():
    return create_app(ConfigForTests())


@pytest.fixture()
def client(app):
    return app.test_client()
