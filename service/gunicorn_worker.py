"""The gunicorn worker: gthread's threads, each given only a request that is already whole.

gunicorn's gthread worker hands a connection to a thread as soon as bytes arrive, and the
thread then blocks reading the rest: a few clients that send half a request and wait hold
every thread, and the server stops answering. :class:`WholeRequestWorker` reads each
request in its main loop instead, without blocking (its poller says when a socket is
readable): the request line and headers, then the body (Content-Length bytes, or a chunked
body followed chunk by chunk to its last chunk), bounded in size and in time. Only then
does a thread get the connection, with the request's bytes handed to gunicorn's parser
through an unreader that never touches the socket, so a thread never waits for a client.

- A request must be whole within ``REQUEST_READ_SECONDS`` of its first byte (of the
  accept, for a new connection), else 408 and the connection closes. An idle kept-alive
  connection is closed after gunicorn's ``keepalive``, as gthread does.
- A body over ``MAX_BODY_BYTES`` (a Content-Length or the chunks' sum) is refused with 413
  as soon as it is announced; a bad chunk size (``zz``), a missing CRLF, a bare LF, a
  Content-Length that is not a number or comes twice, or a header field line gunicorn's
  parser would refuse (a name that is not a token, a control character in a value) are
  refused with 400 as soon as they are seen.
- README's limits hold to the byte: a request line of ``limit_request_line`` bytes (4094),
  a header field line of ``limit_request_field_size`` bytes (8190, without its CRLF), that
  many fields (100) and a head of :data:`MAX_HEAD_BYTES` (its last empty line included)
  are taken; one byte or field more is refused (414, 431). gunicorn's parser is given
  :class:`ParserConfig`, so that it never refuses first what the framer takes.
- What gunicorn's parser still refuses in the thread (a lower-case method, an HTTP/2.0 or
  HTTP/0.9 request line, a target that is not printable ASCII, Host or Content-Type twice,
  an Expect other than 100-continue...) reaches :meth:`WholeRequestWorker.handle_error`,
  which answers as the worker does (``PARSER_REFUSALS``), never with gunicorn's HTML page;
  any other error there is a 500 ``internal-error``, logged with its trace.
- The worker's own answers are problem+json with a ``ProblemCode`` and close the
  connection; the close lingers on the poller (the unread rest of the request is read and
  dropped, never the main loop blocked) so that the answer is not lost to a reset. Each
  carries an ``X-Request-ID`` (and the body a ``request_id``), made as the app makes one
  (service/http/observability.py): the client's, once the worker has read the headers and
  the id is usable, else a new one; the log line of the refusal carries it too.
- A waiting connection costs its socket and its buffer, bounded by :data:`MAX_HEAD_BYTES`
  + ``MAX_BODY_BYTES`` + :data:`CHUNK_FRAMING_BYTES`. gunicorn's ``worker_connections``
  bounds the connections of a worker: at the bound the worker first closes its oldest idle
  kept-alive connection, and with none to close it stops accepting, so new connections
  wait in the listen backlog (or go to another worker) until a slot frees; every waiting
  connection frees its slot within ``REQUEST_READ_SECONDS``. The bound is lowered to fit
  the worker's file descriptor limit, and a failed accept (EMFILE) pauses accepting
  briefly rather than spinning on the listener.
- A new connection that sends nothing is closed without an answer at its deadline.
- Each answer of the worker's own (the app never saw the request) is counted in the app's
  ``http_requests_total``, with the endpoint ``<worker>`` (service/http/observability.py).
- A worker whose master is killed closes its listening sockets at once (with every
  worker's copy closed the kernel refuses new connections, and the balancer tries another
  server), rather than leave new connections in the backlog until it exits; the requests
  it already has are still answered (gthread's graceful end). On Linux the master's death
  is signalled (``PR_SET_PDEATHSIG``); elsewhere the worker looks before each accept and
  at each turn of its loop (at least once a second).
- Connections spread over the workers. All workers wait on the one listening socket, and
  a burst of new connections (a client's or a balancer's pool of keep-alive connections,
  opened at once) would otherwise go mostly to whichever worker the scheduler runs first,
  and stay there: one core busy, the other idle. A worker knows only its own connections,
  so its share is a bound it sets itself, at first one connection per thread: up to it,
  it accepts waiting connections at once; at it, it leaves a new connection in the
  backlog for ``ACCEPT_DEFER_SECONDS``, for a worker below its share to take. A connection
  still waiting then was left by every other worker (busy, stopped, or at its own share),
  so this worker's share doubles and it accepts: a connection is never left unserved, and
  a lone or much-loaded server takes a burst of N connections within about log2(N /
  threads) deferrals. The share falls back as its connections close (to twice those it
  holds, never below one per thread). A server with one worker never defers.
- An answer's head and its body leave in one send (:class:`OneSendAnswer`): gunicorn
  writes them in two, and a server stopped or killed between the two leaves the balancer
  holding a head with no body, an answer it can neither finish nor retry elsewhere.
- Left as gthread has it: the thread writes the answer with a blocking send, so a client
  that never reads could hold a thread only with an answer larger than the socket
  buffers (ours are a few KiB; HAProxy reads them whole).
- The app is told that each body is whole in memory (``WHOLE_BODY_KEY`` of
  service/http/body.py set in the environ), so it bounds no read of the socket.
- Pipelined requests are answered in order: bytes read past the end of a request wait in
  the connection's buffer and are read as its next request once the answer is sent.
- HTTP/1.x on plain TCP only: TLS ends at the balancer, and HTTP/2 is not offered
  (``check_config`` refuses ``certfile`` and any ``http2_cleartext`` but ``off``).
- ``MAX_BODY_BYTES`` and ``REQUEST_READ_SECONDS`` are the values deploy/gunicorn.conf.py
  read, handed over by its ``post_fork`` hook (:meth:`WholeRequestWorker.configure`); the
  worker reads no environment, and refuses to boot unconfigured.
- An unexpected error on one connection in the main loop (a socket gthread closed after
  the app failed mid-answer, say) closes that connection and is logged, as in gthread; it
  never ends the worker and its other connections.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import heapq
import http
import itertools
import json
import os
import re
import resource
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any

from gunicorn import util
from gunicorn.http import errors as parse_errors
from gunicorn.http import get_parser
from gunicorn.http.unreader import Unreader
from gunicorn.workers.gthread import TConn, ThreadWorker

from service.private_parts import CHECKED_VERSIONS, installed_version, is_checked

if TYPE_CHECKING:
    from service.http.problems import ProblemCode

# gunicorn's insides the worker is written on (service/private_parts.py lists each) that
# another gunicorn may lack (26.2.0 has neither): their absence stops no import, so that on
# such a gunicorn the worker can say why it refuses to start (check_config).
MISSING_PARTS: list[str] = []
try:
    from gunicorn.http.body import CHUNK_EXT_RE
except ImportError:
    CHUNK_EXT_RE = None
    MISSING_PARTS.append("gunicorn.http.body.CHUNK_EXT_RE")
try:
    from gunicorn.workers.gthread import STOP_KEEPALIVE_LINGER
except ImportError:
    STOP_KEEPALIVE_LINGER = None
    MISSING_PARTS.append("gunicorn.workers.gthread.STOP_KEEPALIVE_LINGER")

WORKER_GUNICORN = CHECKED_VERSIONS["gunicorn"]
"""The gunicorn versions the worker runs on: those its use of gunicorn's insides was
checked on (service/private_parts.py; a version of fewer parts names a series). On any
other, :meth:`WholeRequestWorker.check_config` refuses to start (:func:`worker_refusal`)."""


def worker_refusal(version: str | None = None) -> str | None:
    """Why the worker does not run on gunicorn ``version`` (default: the installed one), naming
    the range and the alternative; None on a version of :data:`WORKER_GUNICORN`."""
    version = installed_version("gunicorn") if version is None else version
    if version is not None and is_checked(version, WORKER_GUNICORN) and not MISSING_PARTS:
        return None
    missing = f" ({', '.join(MISSING_PARTS)} missing)" if MISSING_PARTS else ""
    return (
        f"service.gunicorn_worker.WholeRequestWorker runs on gunicorn {' or '.join(WORKER_GUNICORN)} only "
        f"(the versions its use of gunicorn's insides was checked on, service/private_parts.py), "
        f"not on gunicorn {version}{missing}. Serve with gunicorn's own worker instead, worker_class = "
        "\"gthread\", behind the balancer that reads each request whole (deploy/haproxy.cfg, "
        "option http-buffer-request); or check the worker on this gunicorn and add its version there."
    )

MAX_HEAD_BYTES = 32 * 1024
"""Most bytes of a request line and headers together (431 above): a small buffer per
connection, like nginx's default; gunicorn's own per-line and per-count limits apply too."""

CHUNK_FRAMING_BYTES = 16 * 1024
"""Most bytes of chunk-size lines, CRLFs and trailers a chunked body may add to its data
(413 above), so a body of many tiny chunks cannot grow the buffer past its bound."""

LINGER_SECONDS = 2.0
"""How long a connection the worker answered itself stays open to read and drop the rest
of its request (so the client reads the answer instead of a reset)."""

RECV_BYTES = 64 * 1024
SPARE_DESCRIPTORS = 64  # for what else a worker opens: its pipes, logs, solver processes
OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
ACCEPT_PAUSE_SECONDS = 0.5
ACCEPT_DEFER_SECONDS = 0.025
"""How long a worker beyond its share of connections leaves a new one in the backlog for
another worker: several of CPython's thread switch intervals (5 ms), so that a worker whose
main loop waits for the GIL behind its busy threads, or for a CPU, still gets its turn."""
HEX_DIGITS = re.compile(rb"[0-9a-fA-F]*")
# A header field line as gunicorn's parser takes it: a token, a colon, a value without
# controls but HTAB (RFC 9110 sections 5.6.2 and 5.5; obs-text is allowed), in one match.
FIELD_NAME = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
FIELD_LINE = re.compile(FIELD_NAME + rb":[^\x00-\x08\x0a-\x1f\x7f]*")
FIELD_LINES = re.compile(rb"(?:\r\n" + FIELD_LINE.pattern + rb")*")  # every line after the request line
EMPTY_LINES = re.compile(rb"(?:\r\n)*")
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
CRLF_BYTES = 2
METHOD_BYTES = 20  # a longer method gunicorn refuses; enough for the label of the metrics

ORPHAN_SIGNAL = signal.SIGUSR2
"""The signal Linux sends a worker when its master dies (``PR_SET_PDEATHSIG``): it only
wakes the main loop, which then sees the master gone (gunicorn's master sends it no USR2)."""
PR_SET_PDEATHSIG = 1  # linux/prctl.h

# gunicorn's own refusals (its parser's exceptions, raised in the thread and handed to the
# worker's handle_error), answered as the worker answers its own: the exception's name in
# gunicorn.http.errors (27.0.1 has them all; one an older gunicorn lacks is skipped), the
# status, and a fixed detail, never the client's bytes. Any other exception is a 500, logged.
PARSER_REFUSAL_NAMES: tuple[tuple[str, int, str], ...] = (
    ("LimitRequestLine", 414, "the request line is too long"),
    ("LimitRequestHeaders", 431, "the request's header fields are over the server's limits"),
    ("InvalidRequestLine", 400, "the request line is not 'METHOD target HTTP/1.x'"),
    ("InvalidRequestMethod", 400, "the method is not an upper-case token of 3 to 20 characters"),
    ("InvalidHTTPVersion", 400, "the HTTP version is not HTTP/1.x"),
    ("ObsoleteFolding", 400, "a header field is folded over several lines (RFC 9112 section 5.2)"),
    ("InvalidHeaderName", 400, "a header field name is not accepted (a token, without '_')"),
    ("InvalidHeader", 400,
     "a header field is malformed, or repeated where it may come once (Host, Content-Type, Content-Length)"),
    ("UnsupportedTransferCoding", 400, "the only Transfer-Encoding accepted is chunked (HTTP/1.1)"),
    ("InvalidChunkSize", 400, "the chunked body is malformed"),
    ("ChunkMissingTerminator", 400, "the chunked body is malformed"),
    ("InvalidChunkExtension", 400, "the chunked body is malformed"),
    ("InvalidSchemeHeaders", 400, "the request's scheme headers contradict each other"),
    ("InvalidProxyLine", 400, "the PROXY protocol header is malformed"),
    ("InvalidProxyHeader", 400, "the PROXY protocol header is malformed"),
    ("ForbiddenProxyRequest", 403, "the PROXY protocol is not accepted from this address"),
    ("ExpectationFailed", 417, "the only expectation accepted is 100-continue"),
    ("InvalidH2CPreface", 400, "HTTP/2 is not served"),
)
PARSER_REFUSALS: tuple[tuple[type[Exception], int, str], ...] = tuple(
    (getattr(parse_errors, name), status, detail) for name, status, detail in PARSER_REFUSAL_NAMES
    if hasattr(parse_errors, name))
APP_FAULTS: tuple[type[Exception], ...] = tuple(
    getattr(parse_errors, name) for name in ("InvalidResponseHeader", "InvalidResponseHeaderName", "ConfigurationProblem")
    if hasattr(parse_errors, name))
"""Not the client's fault, though some subclass a refusal above: a 500, logged with its trace."""


class Rejection(Exception):
    """A request the worker answers itself, with ``status``, and does not pass on."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class Stage(Enum):
    HEAD = "head"
    LENGTH_BODY = "length-body"
    CHUNK_SIZE = "chunk-size"
    CHUNK_DATA = "chunk-data"
    TRAILERS = "trailers"


@dataclass(frozen=True)
class Limits:
    """What one request may be: gunicorn's line limits and the service's body limit."""

    max_body_bytes: int
    max_request_line: int  # 0: no limit of its own (MAX_HEAD_BYTES still applies)
    max_field_bytes: int
    max_fields: int


@dataclass(eq=False)
class RequestFramer:
    """Finds where one HTTP/1.1 request ends in the bytes read so far, without blocking.

    :meth:`feed` appends bytes and answers the offset just past the request once it is
    whole, else None; it raises :class:`Rejection` as soon as the bytes cannot be a request
    this service accepts. Only the framing is checked here (sizes, chunks, line ends);
    gunicorn's parser reads the request itself in the thread.
    """

    limits: Limits
    buf: bytearray = field(default_factory=bytearray)
    stage: Stage = Stage.HEAD
    pos: int = 0  # where the stage's unread part starts
    scan: int = 0  # a block of lines (head, trailers): where the search for its end resumes
    head_end: int = 0
    body_end: int = 0  # LENGTH_BODY: offset just past the body
    chunk_left: int = 0  # CHUNK_DATA: bytes of the current chunk not yet seen
    body_bytes: int = 0  # chunked: data bytes announced so far
    expects_continue: bool = False  # the client waits for "100 Continue" before its body

    def feed(self, data: bytes) -> int | None:
        self.buf += data
        return self._advance()

    def method(self) -> str:
        """The request's method as far as it came (for the metrics, whose label is bounded)."""
        return bytes(self.buf[:METHOD_BYTES + 1]).partition(b" ")[0].decode("latin-1")

    @property
    def started(self) -> bool:
        return bool(self.buf)

    def room(self) -> int:
        """Bytes the buffer may still take before the request is refused as too large."""
        if self.stage is Stage.HEAD:
            return MAX_HEAD_BYTES - len(self.buf)
        if self.stage is Stage.LENGTH_BODY:
            return max(self.body_end - len(self.buf), 0) + MAX_HEAD_BYTES  # a pipelined head may follow
        return self.head_end + self.limits.max_body_bytes + CHUNK_FRAMING_BYTES - len(self.buf)

    def _advance(self) -> int | None:
        if self.stage is Stage.HEAD and not self._read_head():
            return None
        if self.stage is Stage.LENGTH_BODY:
            return self.body_end if len(self.buf) >= self.body_end else None
        end = self._read_chunks()
        if end is None and len(self.buf) - self.head_end > self.limits.max_body_bytes + CHUNK_FRAMING_BYTES:
            raise Rejection(413, f"the chunked body is over {self.limits.max_body_bytes} bytes with its framing")
        return end

    # --- head ---------------------------------------------------------------------------

    def _read_head(self) -> bool:
        """True once the head is whole and its framing headers read."""
        buf = self.buf
        if buf.startswith(b"\r\n"):  # empty lines before a request are ignored (RFC 9112 section 2.2)
            del buf[:EMPTY_LINES.match(buf).end()]  # type: ignore[union-attr]  # always matches
            self.scan = 0
        longest = self.limits.max_request_line
        if longest and len(buf) > longest + 1 and buf.find(b"\r\n", 0, longest + 2) < 0:
            raise Rejection(414, f"the request line is over {longest} bytes")
        end = self._end_of_block(0)
        if end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise Rejection(431, f"the request head is over {MAX_HEAD_BYTES} bytes")
            return False
        if end > MAX_HEAD_BYTES:
            raise Rejection(431, f"the request head is over {MAX_HEAD_BYTES} bytes")
        self.head_end = end
        head = bytes(buf[:end - 4])
        self._frame(head.partition(b"\r\n")[0], self._header_fields(head))
        return True

    def _end_of_block(self, start: int) -> int:
        """The offset past the empty line that ends the lines from ``start``, or -1 while it
        has not come; each byte is searched once, and a bare LF refused as soon as it comes."""
        buf = self.buf
        scan = max(self.scan, start)
        end = buf.find(b"\r\n\r\n", max(scan - 3, start))
        stop = len(buf) if end < 0 else end + 4
        if buf.count(b"\n", scan, stop) != buf.count(b"\r\n", max(scan - 1, start), stop):
            raise Rejection(400, "a line of the request ends in a bare LF (lines end in CRLF)")
        self.scan = stop
        return -1 if end < 0 else end + 4

    def client_request_id(self) -> str | None:
        """The request's ``X-Request-ID`` as the app would see it (repeats joined with ``,``,
        as gunicorn joins them), or None while the head is not read or could not be.

        Read again from the buffer only for a refused request, so a request that is passed
        on pays nothing for it."""
        if not self.head_end:
            return None
        try:
            fields = self._header_fields(bytes(self.buf[:self.head_end - 4]))
        except Rejection:
            return None  # refused for its header fields: none of them is to be trusted
        values = [value for name, value in fields if name == b"x-request-id"]
        return b",".join(values).decode("latin-1") if values else None

    def _header_fields(self, head: bytes) -> list[tuple[bytes, bytes]]:
        """The (lower-case name, value) of each header field of ``head`` (the request line and
        the field lines, without the empty line), refused as gunicorn's parser would refuse
        them, and within the limits. All lines are checked in one match; only a refused head
        is looked at line by line, for the first line at fault."""
        lines = head.split(b"\r\n")[1:]
        limits = self.limits
        if len(lines) > limits.max_fields:
            raise Rejection(431, f"the request has over {limits.max_fields} header fields")
        too_long = len(head) > limits.max_field_bytes and max(map(len, lines), default=0) > limits.max_field_bytes
        if lines and (too_long or not FIELD_LINES.fullmatch(head, head.index(b"\r\n"))):
            for line in lines:
                if len(line) > limits.max_field_bytes:
                    raise Rejection(431, f"a header field is over {limits.max_field_bytes} bytes")
                if not FIELD_LINE.fullmatch(line):
                    raise Rejection(400, field_line_problem(line))
        return [(name.lower(), value.strip(b" \t")) for name, _, value in (line.partition(b":") for line in lines)]

    def _frame(self, request_line: bytes, fields: list[tuple[bytes, bytes]]) -> None:
        """Where the body ends (RFC 9112 section 6.3), from the framing headers."""
        codings = [c.strip().lower() for n, v in fields if n == b"transfer-encoding" for c in v.split(b",")]
        lengths = [v for n, v in fields if n == b"content-length"]
        http_10 = request_line.endswith(b"HTTP/1.0")
        self.expects_continue = not http_10 and any(
            n == b"expect" and v.lower() == b"100-continue" for n, v in fields)
        if codings:
            if lengths:
                raise Rejection(400, "a request has Transfer-Encoding or Content-Length, not both")
            if codings != [b"chunked"] or http_10:
                raise Rejection(400, "the only Transfer-Encoding accepted is chunked (HTTP/1.1)")
            self.stage, self.pos = Stage.CHUNK_SIZE, self.head_end
            return
        if len(lengths) > 1:  # even the same twice: gunicorn's parser would refuse it
            raise Rejection(400, "the request has more than one Content-Length")
        length = lengths.pop() if lengths else b"0"
        if not length.isdigit():
            raise Rejection(400, "Content-Length is not a number of bytes")
        if len(length) > 20 or int(length) > self.limits.max_body_bytes:
            raise Rejection(413, f"the body is over {self.limits.max_body_bytes} bytes")
        if int(length) == 0:
            self.expects_continue = False
        self.stage, self.body_end = Stage.LENGTH_BODY, self.head_end + int(length)

    # --- chunked body -------------------------------------------------------------------

    def _read_chunks(self) -> int | None:
        """The offset past the chunked body once its last chunk and trailers are in."""
        buf = self.buf
        while True:
            if self.stage is Stage.CHUNK_DATA:
                data_end = self.pos + self.chunk_left
                have = buf[data_end:data_end + 2]
                if have != b"\r\n"[:len(have)]:
                    raise Rejection(400, "a chunk's data is not followed by CRLF")
                if len(have) < 2:
                    return None
                self.stage, self.pos = Stage.CHUNK_SIZE, data_end + 2
            if self.stage is Stage.CHUNK_SIZE:
                line_end = buf.find(b"\r\n", self.pos)
                if line_end >= 0:
                    self._check_chunk_size(bytes(buf[self.pos:line_end]), whole=True)
                else:  # so far: its CR may have come, not yet its LF
                    self._check_chunk_size(bytes(buf[self.pos:]).removesuffix(b"\r"), whole=False)
                if line_end < 0:
                    return None
                size = int(bytes(buf[self.pos:line_end]).split(b";", 1)[0].rstrip(b" \t"), 16)
                self.pos = line_end + 2
                if size:
                    self.stage, self.chunk_left = Stage.CHUNK_DATA, size
                    continue
                self.stage = Stage.TRAILERS
            return self._read_trailers()

    def _check_chunk_size(self, line: bytes, whole: bool) -> None:
        """Refuse a chunk-size line as soon as its bytes cannot make an acceptable one,
        whatever way they arrive: as gunicorn's parser reads it, whitespace may follow the
        size only before a ``;`` (RFC 9112 section 7.1.1), so while neither the ``;`` nor
        the line's end has come, trailing whitespace may still be that and is not judged."""
        if len(line) > self.limits.max_field_bytes:
            raise Rejection(400, "a chunk-size line is too long")
        size, semicolon, extension = line.partition(b";")
        if semicolon or not whole:
            size = size.rstrip(b" \t")
        if (semicolon or whole or size != line) and not size:
            raise Rejection(400, "a chunk has no size")  # nothing, or whitespace, before it
        if not HEX_DIGITS.fullmatch(size):
            raise Rejection(400, f"a chunk size is not hexadecimal: {size[:16].decode('latin-1')!r}")
        digits = size.lstrip(b"0")
        if digits and (len(digits) > 16 or self.body_bytes + int(digits, 16) > self.limits.max_body_bytes):
            raise Rejection(413, f"the chunked body is over {self.limits.max_body_bytes} bytes")
        if whole and semicolon and not CHUNK_EXT_RE.fullmatch(b";" + extension):
            raise Rejection(400, "a chunk extension is malformed")
        if whole and digits:
            self.body_bytes += int(digits, 16)

    def _read_trailers(self) -> int | None:
        if self.buf[self.pos:self.pos + 2] == b"\r\n":
            return self.pos + 2  # no trailer fields
        end = self._end_of_block(self.pos)
        return None if end < 0 else end


# --- the worker -----------------------------------------------------------------------------

def field_line_problem(line: bytes) -> str:
    """Why a header field line does not match ``FIELD_LINE`` (the detail of its 400)."""
    name, colon, _ = line.partition(b":")
    if not colon or not name or name != name.strip():
        return "a header line is not 'name: value'"
    if not re.fullmatch(FIELD_NAME, name):
        return "a header field name is not a token (RFC 9110 section 5.6.2)"
    return "a header field value holds a control character (RFC 9110 section 5.5)"


def ask_for_orphan_signal() -> bool:
    """Ask Linux to send this process ``ORPHAN_SIGNAL`` when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``); False where that cannot be asked (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    args = (PR_SET_PDEATHSIG, int(ORPHAN_SIGNAL), 0, 0, 0)
    return int(prctl(*(ctypes.c_ulong(arg) for arg in args))) == 0


class BufferedUnreader(Unreader):
    """gunicorn's unreader over bytes already read: its source is always at its end, so the
    thread's parser reads only what the main loop read, and never waits on the socket."""

    def chunk(self, size_hint: int | None = None) -> bytes:
        return b""


class ParserConfig:
    """gunicorn's settings as its request parser reads them, but for ``limit_request_field_size``,
    ``CRLF_BYTES`` larger: gunicorn 27.0.1 counts a field line's CRLF in it
    (``Message.parse_headers``), the framer, as README, counts the line alone. So the framer,
    which refuses a field over the limit with 431 problem+json, is always the first to refuse
    (a gunicorn that counts the line alone is 2 bytes more lenient, and the framer still refuses)."""

    def __init__(self, cfg: Any, max_field_bytes: int) -> None:
        self.cfg = cfg
        self.limit_request_field_size = max_field_bytes + CRLF_BYTES

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cfg, name)


class OneSendAnswer:
    """The socket a thread answers on: gunicorn's first write (the head) is held and sent
    with the next one (the body's first bytes) in one ``sendall``, so an answer smaller
    than the socket's send buffer leaves whole or not at all. Anything else is the socket's."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.head: bytes | None = None
        self.wrote = False

    def sendall(self, data: bytes) -> None:
        if not self.wrote:
            self.wrote = True
            self.head = bytes(data)
            return
        self.sock.sendall(self.flushed(data))

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self.sock.sendall(self.flushed(b""))
        return self.sock.sendfile(file, offset, count)

    def flushed(self, data: bytes) -> bytes:
        """``data`` after any head still held, which is no longer held."""
        head, self.head = self.head, None
        return head + data if head else data

    def flush(self) -> None:
        """Sends a head still held: an answer with no body (a HEAD request, a 204)."""
        if self.head:
            self.sock.sendall(self.flushed(b""))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class Phase(Enum):
    IDLE = "idle"  # kept alive, no byte of a next request yet
    READING = "reading"  # a request under way
    CLOSING = "closing"  # answered by the worker; the rest of the request is read and dropped


class WholeRequestConn(TConn):
    """gthread's connection, with what the main loop keeps between requests."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read_ahead = b""  # bytes read past the request being served (pipelined)
        self.request = b""  # the request being served, as the main loop read it
        self.head_end = 0  # where its head ends in it
        self.answered = False  # its answer was written (an error after it is not answered)
        self.continue_sent = False
        self.released = False  # closed and no longer counted in the worker's nr_conns


@dataclass(eq=False)
class Waiting:
    """A connection in the main loop: its framer, phase and deadline."""

    conn: WholeRequestConn
    framer: RequestFramer
    phase: Phase
    deadline: float


class WholeRequestWorker(ThreadWorker):
    """gthread with each request read whole in the main loop (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.worker_connections: int = self.cfg.worker_connections  # gthread's bound (lowered to fit the fd limit)
        # MAX_BODY_BYTES and REQUEST_READ_SECONDS as deploy/gunicorn.conf.py read them, given
        # by its post_fork hook through configure(): the worker reads no environment itself.
        self.configured = False
        self.read_seconds = 0.0
        cfg = self.cfg
        self.limits = Limits(
            max_body_bytes=0,
            max_request_line=max(cfg.limit_request_line, 0),
            max_field_bytes=cfg.limit_request_field_size if cfg.limit_request_field_size > 0 else MAX_HEAD_BYTES,
            max_fields=cfg.limit_request_fields if cfg.limit_request_fields > 0 else MAX_HEAD_BYTES,
        )
        self.parser_cfg = ParserConfig(cfg, self.limits.max_field_bytes)
        self.serving = threading.local()  # in a thread: the connection it serves (for handle_error)
        self.master: int | None = None  # the master's pid, once the worker runs (init_process)
        self.orphaned = False  # the master is gone: the listeners are closed
        self.count_answer: Callable[[str, int], None] = lambda method, status: None  # set in init_process
        self.waiting: dict[WholeRequestConn, Waiting] = {}  # in the order they started waiting
        self.deadlines: list[tuple[float, int, Waiting]] = []  # a heap; stale entries skipped
        self.order = itertools.count()
        self.stop_capped = False
        self.accept_paused_until = 0.0
        # Connections it accepts without deferring (see the module's docstring); a lone
        # worker never defers.
        self.least_share = max(self.cfg.threads, 1) if self.cfg.workers > 1 else self.worker_connections
        self.share = self.least_share
        self.accept_deferred_until = 0.0  # 0: no connection left in the backlog for another worker

    def configure(self, *, max_body_bytes: int, read_seconds: float) -> None:
        """The service's bounds on a request (deploy/gunicorn.conf.py's ``post_fork`` calls
        this with the values it read; a worker never configured refuses to boot)."""
        self.limits = replace(self.limits, max_body_bytes=max_body_bytes)
        self.read_seconds = read_seconds
        self.configured = True

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        refusal = worker_refusal()
        if refusal is not None:
            raise RuntimeError(refusal)
        super().check_config(cfg, log)
        if cfg.is_ssl:
            raise RuntimeError(f"{cls.__name__} serves plain HTTP/1.x: end TLS at the balancer")
        if getattr(cfg, "http2_cleartext", "off") != "off":
            raise RuntimeError(f"{cls.__name__} serves HTTP/1.x only: http2_cleartext must stay off")

    # --- connections in the main loop -------------------------------------------------------

    def accept(self, listener: socket.socket) -> None:
        """Connections are waiting: take them up to this worker's share, all in one go (a
        worker whose threads hold the GIL gets few turns of its loop); beyond it, leave
        them to another worker for ``ACCEPT_DEFER_SECONDS`` (see :meth:`accept_deferred`). Never
        once the master is gone (:meth:`is_parent_alive`)."""
        if not self.is_parent_alive():
            return
        self.share = max(self.least_share, min(self.share, 2 * self.nr_conns))  # falls back as connections close
        if self.nr_conns >= self.share:
            self.accept_deferred_until = time.monotonic() + ACCEPT_DEFER_SECONDS
            super().set_accept_enabled(False)
            return
        while self.nr_conns < min(self.share, self.worker_connections) and self.accept_one(listener):
            pass

    def accept_deferred(self) -> None:
        """At the end of a deferral: a connection still waiting was left by every other
        worker, so this worker's share doubles and it takes it (and, on the listener
        again, those behind it up to the new share)."""
        self.accept_deferred_until = 0.0
        if not self.is_parent_alive() or not self.alive:
            return
        for listener in self.sockets:
            if self.nr_conns < self.worker_connections and self.accept_one(listener):
                self.share = min(2 * self.share, self.worker_connections)
        self.set_accept_enabled(self.nr_conns < self.worker_connections)

    def accept_one(self, listener: socket.socket) -> bool:
        """Accept a connection if one is waiting; True if one was."""
        try:
            sock, address = listener.accept()
        except OSError as e:
            if e.errno in OUT_OF_DESCRIPTORS:
                # Never a busy loop on a listener that stays readable: pause accepting.
                self.log.warning("accept failed (%s): not accepting for %g s", e, ACCEPT_PAUSE_SECONDS)
                self.accept_paused_until = time.monotonic() + ACCEPT_PAUSE_SECONDS
                super().set_accept_enabled(False)
                return False
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return False
        self.nr_conns += 1
        conn = WholeRequestConn(self.cfg, sock, address, listener.getsockname())
        self.wait(Waiting(conn, RequestFramer(self.limits), Phase.READING, time.monotonic() + self.read_seconds))
        return True

    def wait(self, waiting: Waiting) -> None:
        waiting.conn.sock.setblocking(False)  # a thread left it blocking
        self.waiting[waiting.conn] = waiting
        self.poller.register(waiting.conn.sock, selectors.EVENT_READ, partial(self.on_readable, waiting))
        self.set_deadline(waiting, waiting.deadline)

    def set_deadline(self, waiting: Waiting, deadline: float) -> None:
        waiting.deadline = deadline
        heapq.heappush(self.deadlines, (deadline, next(self.order), waiting))

    def unwait(self, waiting: Waiting) -> None:
        del self.waiting[waiting.conn]
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(waiting.conn.sock)

    def drop(self, waiting: Waiting) -> None:
        """Close a waiting connection at once."""
        self.unwait(waiting)
        waiting.framer.buf.clear()
        self.release(waiting.conn)

    def release(self, conn: WholeRequestConn) -> None:
        """Close a connection and stop counting it (once, whatever called first)."""
        if not conn.released:
            conn.released = True
            self.nr_conns -= 1
        util.close(conn.sock)

    def abandon(self, conn: WholeRequestConn, failure: str) -> None:
        """After an unexpected error on a connection in the main loop: log it and close that
        connection, as gthread does, rather than let it end the worker and all the others."""
        self.log.exception("%s failed for %s: connection closed", failure, conn.client)
        waiting = self.waiting.get(conn)
        if waiting is not None:
            self.unwait(waiting)
        self.release(conn)

    def on_readable(self, waiting: Waiting, sock: socket.socket) -> None:
        try:
            self.read_some(waiting, sock)
        except Exception:
            self.abandon(waiting.conn, "reading a request")

    def read_some(self, waiting: Waiting, sock: socket.socket) -> None:
        framer = waiting.framer
        try:
            data = sock.recv(RECV_BYTES if waiting.phase is Phase.CLOSING else max(min(RECV_BYTES, framer.room() + 1), 1))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.drop(waiting)
            return
        if not data or waiting.phase is Phase.CLOSING:
            if not data:
                self.drop(waiting)
            return
        if waiting.phase is Phase.IDLE:
            waiting.phase = Phase.READING
            self.set_deadline(waiting, time.monotonic() + self.read_seconds)
        self.take(waiting, data)

    def take(self, waiting: Waiting, data: bytes) -> None:
        """Add ``data`` to the request under way; pass it on if whole, answer it if refused."""
        framer = waiting.framer
        try:
            end = framer.feed(data)
        except Rejection as rejection:
            self.answer(waiting, rejection)
            return
        if end is not None:
            self.dispatch(waiting, end)
        elif framer.expects_continue and not waiting.conn.continue_sent and framer.stage is not Stage.HEAD:
            waiting.conn.continue_sent = self.send_now(waiting.conn.sock, CONTINUE)

    def dispatch(self, waiting: Waiting, end: int) -> None:
        """Give the whole request to a thread, with its bytes already read."""
        self.unwait(waiting)
        conn = waiting.conn
        if conn.parser is None:
            conn.parser = get_parser(self.parser_cfg, conn.sock, conn.client)
            conn.parser.unreader = BufferedUnreader()
            conn.initialized = conn.data_ready = True  # gthread's handle() then reads no socket
        conn.request, conn.head_end = bytes(waiting.framer.buf[:end]), waiting.framer.head_end
        conn.parser.unreader.unread(conn.request)
        conn.read_ahead = bytes(waiting.framer.buf[end:])
        waiting.framer.buf.clear()  # the deadline heap may hold this Waiting a while
        self.enqueue_req(conn)

    def answer(self, waiting: Waiting, rejection: Rejection) -> None:
        """Answer a refused request with problem+json, then close (lingering)."""
        problem = self.problem(rejection.status, rejection.detail, waiting.framer.client_request_id(),
                               waiting.framer.method(), waiting.conn.client)
        self.send_now(waiting.conn.sock, problem)
        self.linger(waiting)

    def problem(self, status: int, detail: str, client_id: str | None, method: str, client: Any) -> bytes:
        """The whole problem+json answer (head and body) to a request the worker refuses, with
        its request id (the client's, if usable); logged and counted in the metrics."""
        code = self.code_for(status)
        rid = self.request_id(client_id)
        body = json.dumps({
            "type": "about:blank", "title": code.title_for(status), "status": status,
            "detail": detail, "code": code.value, "request_id": rid,
        }).encode()
        head = (f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\nContent-Type: application/problem+json\r\n"
                f"Content-Length: {len(body)}\r\n{self.request_id_header}: {rid}\r\nConnection: close\r\n\r\n"
                ).encode()
        log = self.log.debug if status == 408 else self.log.info
        log("answered %d %s to %s (request %s): %s", status, code.value, client, rid, detail,
            extra={"request_id": rid})
        self.count_answer(method, status)
        return head + body

    def code_for(self, status: int) -> ProblemCode:
        """The problem code of a status the worker answers (as the app picks one for an
        HTTP error without a code of its own: ``http-error``, or ``internal-error`` for a 5xx)."""
        code = self.codes.get(status)
        if code is None:
            code = self.other_codes[status >= 500]
        return code

    def linger(self, waiting: Waiting) -> None:
        """Half-close; read and drop what the client still sends, for LINGER_SECONDS at most."""
        try:
            waiting.conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self.drop(waiting)
            return
        waiting.phase = Phase.CLOSING
        waiting.framer = RequestFramer(self.limits)  # frees the request's buffer
        self.set_deadline(waiting, time.monotonic() + LINGER_SECONDS)

    @staticmethod
    def send_now(sock: socket.socket, data: bytes) -> bool:
        """Send without blocking; True if all of ``data`` went (small answers always fit)."""
        try:
            return sock.send(data) == len(data)
        except OSError:
            return False

    def expire(self) -> None:
        """Act on every deadline passed: 408 for a request under way, close the rest."""
        now = time.monotonic()
        while self.deadlines and self.deadlines[0][0] <= now:
            deadline, _, waiting = heapq.heappop(self.deadlines)
            if self.waiting.get(waiting.conn) is not waiting or waiting.deadline != deadline:
                continue  # stale: the connection moved on or got a later deadline
            if waiting.phase is Phase.READING and waiting.framer.started:
                self.answer(waiting, Rejection(408, f"the request was not whole within {self.read_seconds:g} s"))
            else:
                self.drop(waiting)

    # --- gthread's hooks --------------------------------------------------------------------

    def init_process(self) -> None:
        # Connections never run the worker out of file descriptors (EMFILE).
        descriptors = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if descriptors != resource.RLIM_INFINITY and self.worker_connections > descriptors - SPARE_DESCRIPTORS:
            self.worker_connections = max(descriptors - SPARE_DESCRIPTORS, 1)
            self.log.warning("worker_connections lowered to %d: the file descriptor limit is %d",
                             self.worker_connections, descriptors)
        self.init_answers()
        self.master = self.ppid
        if not self.configured:
            raise RuntimeError(f"{type(self).__name__} was not configured: name it in deploy/gunicorn.conf.py, "
                               "whose post_fork hook gives it MAX_BODY_BYTES and REQUEST_READ_SECONDS")
        super().init_process()

    def init_answers(self) -> None:
        """What the worker's own answers take from the app's modules, which load in the
        worker, never in gunicorn's master: the problem codes, the request id, the metrics."""
        from service.http.observability import REQUEST_ID_HEADER, count_worker_answer, incoming_request_id
        from service.http.problems import ProblemCode

        worker_codes = (ProblemCode.MALFORMED_REQUEST, ProblemCode.REQUEST_TIMEOUT, ProblemCode.BODY_TOO_LARGE,
                        ProblemCode.REQUEST_LINE_TOO_LONG, ProblemCode.HEADERS_TOO_LARGE)
        self.codes = {code.status: code for code in worker_codes}
        self.other_codes = (ProblemCode.HTTP_ERROR, ProblemCode.INTERNAL_ERROR)  # by "is it a 5xx"
        # Every answer of the worker's own is counted in http_requests_total, as the app's are.
        self.count_answer = count_worker_answer
        # The id of a refused request, made as the app makes one (one place for its format).
        self.request_id: Callable[[str | None], str] = incoming_request_id
        self.request_id_header = REQUEST_ID_HEADER

    def init_signals(self) -> None:
        """gunicorn's signals, and on Linux word of the master's death at once: its signal
        (``ORPHAN_SIGNAL``) does nothing but write gunicorn's wakeup byte, which wakes the main
        loop (:meth:`run`), which then finds the master gone. Elsewhere the loop looks at
        least once a second, and before every accept."""
        super().init_signals()
        signal.signal(ORPHAN_SIGNAL, lambda signum, frame: None)
        signal.siginterrupt(ORPHAN_SIGNAL, False)
        if not ask_for_orphan_signal():
            self.log.debug("no signal on the master's death here: it is looked for at each accept and each second")

    def run(self) -> None:
        if self.PIPE:  # gunicorn's signal wakeup pipe (set_wakeup_fd), which gthread leaves unread
            self.poller.register(self.PIPE[0], selectors.EVENT_READ, self.on_signal)
        super().run()

    def on_signal(self, pipe: int) -> None:
        """A signal came (its wakeup byte): drain the pipe, and see whether the master is gone."""
        with contextlib.suppress(OSError):  # BlockingIOError once empty
            while os.read(pipe, 512):
                pass
        self.is_parent_alive()

    def is_parent_alive(self) -> bool:
        """gthread's check of its master, made each turn of the main loop, on any signal and
        before each accept. A master gone (killed) closes the listening sockets at once: with
        every worker's copy closed the kernel refuses new connections (the balancer tries
        another server), instead of leaving them in the backlog of workers that no longer
        accept; requests already read are still answered (gthread's graceful end)."""
        if self.master is None or os.getppid() == self.master:
            return True
        if not self.orphaned:
            self.orphaned = True
            self.alive = False
            super().set_accept_enabled(False)  # gthread's: the listeners off the poller
            for listener in self.sockets:
                listener.close()
            self.log.warning("the master %d is gone: listening sockets closed, finishing the requests under way",
                             self.master)
        return False

    def load_wsgi(self) -> None:
        """gunicorn's app, called with the environ flagged: its body is whole in memory
        (``WHOLE_BODY_KEY``), so the app sets no idle bound on a socket it never reads; and
        with the connection's own socket, not the :class:`OneSendAnswer` gunicorn writes to."""
        super().load_wsgi()
        from service.http.body import GUNICORN_SOCKET, WHOLE_BODY_KEY

        app: Any = self.wsgi  # type: ignore[has-type]  # gunicorn sets it, unannotated

        def whole_body_app(wsgi_env: dict[str, Any], start_response: Any) -> Any:
            wsgi_env[WHOLE_BODY_KEY] = True
            answer = wsgi_env[GUNICORN_SOCKET]
            if isinstance(answer, OneSendAnswer):  # the app sees the socket itself (to poll it)
                wsgi_env[GUNICORN_SOCKET] = answer.sock
            return app(wsgi_env, start_response)

        self.wsgi = whole_body_app

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        if self.deadlines:
            timeout = min(timeout, max(self.deadlines[0][0] - time.monotonic(), 0.0))
        if self.accept_deferred_until:
            timeout = min(timeout, max(self.accept_deferred_until - time.monotonic(), 0.0))
        super().wait_for_and_dispatch_events(timeout)

    def murder_pending(self) -> None:
        """Called by gthread's loop after each wait: the deadlines, the end of a deferred
        accept, and a stopping worker's idle connections closed within STOP_KEEPALIVE_LINGER."""
        if not self.alive and not self.stop_capped:
            self.stop_capped = True
            limit = time.monotonic() + STOP_KEEPALIVE_LINGER
            for waiting in list(self.waiting.values()):
                if waiting.phase is Phase.IDLE and waiting.deadline > limit:
                    self.set_deadline(waiting, limit)
        self.expire()
        if self.accept_deferred_until and time.monotonic() >= self.accept_deferred_until:
            self.accept_deferred()
        super().murder_pending()

    def set_accept_enabled(self, enabled: bool) -> None:
        """At ``worker_connections``, close the oldest idle kept-alive connection and keep
        accepting; stop accepting only when none is idle."""
        if not enabled and self.alive:
            idle = next((w for w in self.waiting.values() if w.phase is Phase.IDLE), None)
            if idle is not None:
                self.drop(idle)
                enabled = self.nr_conns < self.worker_connections
        if enabled and (self.accept_deferred_until or time.monotonic() < self.accept_paused_until or self.orphaned):
            enabled = False
        super().set_accept_enabled(enabled)

    def handle(self, conn: WholeRequestConn) -> Any:
        """gthread's, in a thread; :meth:`handle_error` may need to know the connection."""
        self.serving.conn = conn
        conn.answered = False
        try:
            return super().handle(conn)
        finally:
            self.serving.conn = None

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """gunicorn's answer to an error in a thread, as problem+json like the worker's own
        (gunicorn's is an HTML page): a refusal of its parser (``PARSER_REFUSALS``: a bad
        method, version or header name, Host or Content-Type twice...) with its status, any
        other error 500 ``internal-error`` (logged with its trace). The request id is the
        client's if the framer read the header fields, as for the worker's own refusals;
        the connection then closes (gthread's handle answers False)."""
        status, detail = 500, "the service failed to answer; the error was logged"
        if not isinstance(exc, APP_FAULTS):
            status, detail = next(((s, d) for kind, s, d in PARSER_REFUSALS if isinstance(exc, kind)), (status, detail))
        if status >= 500:
            self.log.exception("error handling a request from %s", addr)
        conn: WholeRequestConn | None = getattr(self.serving, "conn", None)
        if conn is not None and conn.answered:  # failed after its answer (gthread's keep-alive drain)
            self.log.info("error after answering %s (connection closed): %s", addr, exc)
            return
        client_id, method = None, ""
        if conn is not None and conn.request:
            framer = RequestFramer(self.limits, buf=bytearray(conn.request), head_end=conn.head_end)
            client_id, method = framer.client_request_id(), framer.method()
        problem = self.problem(status, detail, client_id, method, addr)
        try:
            client.sendall(problem)
        except OSError as error:
            self.log.debug("the answer to a refused request was not sent: %s", error)

    def handle_request(self, req: Any, conn: WholeRequestConn) -> Any:
        if conn.continue_sent:
            req._expected_100_continue = False  # the main loop sent "100 Continue" already
        conn.continue_sent = False
        sock, answer = conn.sock, OneSendAnswer(conn.sock)
        conn.sock = answer
        try:
            keep = super().handle_request(req, conn)
            answer.flush()
            conn.answered = True
            return keep
        finally:
            conn.sock = sock

    def finish_request(self, conn: WholeRequestConn, fs: Any) -> None:
        """Back from the thread: wait for the connection's next request, or close it. Any
        error closes this connection only, as in gthread (never the worker and the others)."""
        try:
            self.after_request(conn, fs)
        except Exception:
            self.abandon(conn, "finishing a request")

    def after_request(self, conn: WholeRequestConn, fs: Any) -> None:
        conn.request = b""  # kept for handle_error only: an idle connection holds no request
        try:
            keep = bool(fs.result()) if not fs.cancelled() else False
        except Exception:
            keep = False
        if conn.sock.fileno() < 0:  # closed in the thread (the app failed mid-answer, or gthread gave up)
            self.release(conn)
            return
        unread = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        now = time.monotonic()
        # A stopping worker keeps the connection briefly, as gthread does: a request already
        # on its way is answered (with "Connection: close") rather than dropped.
        idle_until = now + self.cfg.keepalive if self.alive else now + min(self.cfg.keepalive, STOP_KEEPALIVE_LINGER)
        waiting = Waiting(conn, RequestFramer(self.limits), Phase.IDLE, idle_until)
        self.wait(waiting)
        if not keep or unread:
            # Closed lingering on the poller, never with gthread's close_graceful, which
            # blocks the main loop until the client closes.
            self.linger(waiting)
            return
        if conn.read_ahead:
            waiting.phase = Phase.READING
            self.set_deadline(waiting, time.monotonic() + self.read_seconds)
            read_ahead, conn.read_ahead = conn.read_ahead, b""
            self.take(waiting, read_ahead)
