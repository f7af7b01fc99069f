"""Running the app on a loopback port and a headless Debian Chromium driven by Playwright.

Used by tests/browser/test_browser.py. Playwright's own browser download cannot reach its
servers here, so the browser is Debian's ``chromium``, installed by
``deploy/install-browser.sh``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, Request, Response, Route

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
CHROMIUM_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-gpu",
    "--disable-dev-shm-usage",
]


def install_browser() -> None:
    """Run the project's idempotent installer (a no-op when Chromium is there)."""
    subprocess.run(["bash", str(ROOT / "deploy" / "install-browser.sh")], check=True, env={**os.environ, "CHROMIUM": CHROMIUM})



def launch(playwright: Playwright) -> Browser:
    args = list(CHROMIUM_ARGS)
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium's sandbox refuses to run as root
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)


@dataclass
class PageWatch:
    """What went wrong in a page: console errors, failed requests, requests off this host."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"uncaught: {error}"))
        page.on("requestfailed", self._on_failed)
        page.on("response", self._on_response)
        page.route("**/*", self._guard)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(f"{message.text} at {message.location}")

    def _on_response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed_requests.append(f"{response.status} {response.request.method} {response.url}")

    def _on_failed(self, request: Request) -> None:
        if request.url not in self.outside_requests:
            self.failed_requests.append(f"{request.failure} {request.method} {request.url}")

    def _guard(self, route: Route) -> None:
        """Only loopback and inline (data:) URLs may load: the page must fetch nothing from outside."""
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https", "ws", "wss") and (parts.hostname or "") not in LOOPBACK:
            self.outside_requests.append(url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def problems(self) -> list[str]:
        return (
            [f"console error: {e}" for e in self.console_errors]
            + [f"failed request: {r}" for r in self.failed_requests]
            + [f"request off this host: {u}" for u in self.outside_requests]
        )


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
