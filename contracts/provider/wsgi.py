"""The WSGI entry point of the Pact verification app (test only): ``gunicorn -c
deploy/gunicorn.conf.py contracts.provider.wsgi:app`` (``make pact-verify``). It lives
outside ``service/``, so the image (which copies ``service/`` alone) has no way to serve it;
service/pact_provider.py says what the app is and when it refuses to start."""

import os

from service.pact_provider import create_verification_app

app = create_verification_app(os.environ)
