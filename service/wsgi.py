"""WSGI entry point for gunicorn: ``gunicorn service.wsgi:app``, configured by the environment."""

from service.http import create_app

app = create_app()  # settings read from the environment (service/settings.py)
