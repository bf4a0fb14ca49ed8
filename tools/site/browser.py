"""The built HTML in a real browser: served from 127.0.0.1, shown in headless Chromium.

Used by ``python -m tools screenshot``, ``python -m tools pdf`` and by the browser tests.
The functions these steps run in the page are JavaScript files of tools/site/js/, one
function each, written as an expression that Playwright's ``evaluate`` calls (``script``).
"""

import contextlib
import functools
import http.server
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

# The functions that the steps run in the page, one a file: <name>.js.
SCRIPTS = Path(__file__).with_name('js')
# Debian's chromium unless BOOK_CHROMIUM names another build.
CHROMIUM = os.environ.get('BOOK_CHROMIUM', '/usr/bin/chromium')
# No sandbox (containers lack it), no GPU, and none of the browser's own network traffic.
CHROMIUM_ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
]


def script_path(name: str) -> Path:
    return SCRIPTS / f'{name}.js'


def script(name: str) -> str:
    """The function of tools/site/js/<name>.js, as Playwright's ``evaluate`` takes it."""
    return script_path(name).read_text(encoding='utf-8')


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    """Reports the errors of its requests, except a connection that the browser dropped
    (a page closed, or left, before a file it asked for came): that is no error."""

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def served(html: Path) -> Iterator[str]:
    """Serve the folder ``html`` on a free port of 127.0.0.1; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=str(html))
    httpd = QuietServer(('127.0.0.1', 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f'http://127.0.0.1:{httpd.server_port}'
    finally:
        httpd.shutdown()
        httpd.server_close()
