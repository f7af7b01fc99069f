"""A Flask app served for real on a loopback port, for tests whose client is another
program (a browser, an example script that fetches over HTTP)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from werkzeug.serving import make_server


@contextmanager
def serve(app: Flask, name: str = "test-server") -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a thread; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
