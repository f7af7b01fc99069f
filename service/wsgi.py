"""WSGI entry point for gunicorn: ``gunicorn service.wsgi:app``, configured by the environment."""

import logging

from service.http import create_app
from service.private_parts import warn_unchecked

app = create_app()  # settings read from the environment (service/settings.py)
# Once per process, at start: a library at a version its private parts were not checked on.
warn_unchecked(logging.getLogger("service"))
