"""The balancer's edge (deploy/haproxy.cfg): its own answers and its limits per client address.

- Every file in deploy/haproxy-errors/ is a whole HTTP/1.1 answer whose body is a problem
  of a :class:`ProblemCode` with the file's status (read here, without HAProxy), and the
  config's ``http-errors`` section names one for every status HAProxy 2.6 answers by itself.
- Through the real HAProxy on loopback (servers here are ``Recorder``s: what reaches them
  is seen directly): 101 header fields, a head over the buffer, an HTTP/0.9 line, a space
  in a header name, a Transfer-Encoding HAProxy refuses, ``/metrics``, a request not whole
  in time, a server's garbage, a server that never answers and no server up are each
  answered problem+json with the expected status and code.
- A server's 503 goes to the client as it is, never retried on another server.
- Limits per client address: past ``HAPROXY_SEARCH_RATE`` search requests a second, 429
  ``rate-limited`` with Retry-After, while other addresses and play go on; past
  ``HAPROXY_CLIENT_CONNECTIONS`` open connections, 429 ``too-many-connections``; past
  ``HAPROXY_CLIENT_CONNECTIONS_MAX``, a new connection is closed at once.
"""

from __future__ import annotations

import http
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml

from service.http.problems import PROBLEM_JSON, ProblemCode
from tests.ops.servers import (
    HAPROXY_CFG,
    HAPROXY_ERRORS,
    OTHER_SOURCE,
    Balancer,
    RawAnswer,
    Recorder,
    connect,
    free_port,
    install_debian_tools,
    parse_answer,
    raw_exchange,
    read_answer,
    wait_for,
)

# The statuses HAProxy 2.6 answers by itself and takes an errorfile for (it also takes one
# for 200, which it never sends as an error, and refuses one for any other, 431 included).
HAPROXY_OWN_STATUSES = (400, 401, 403, 404, 405, 407, 408, 410, 413, 421, 422, 425, 429, 500, 501, 502, 503, 504)
PROBLEM_MEMBERS = {"type", "title", "status", "detail", "code"}
WITH_RETRY_AFTER = {ProblemCode.RATE_LIMITED, ProblemCode.TOO_MANY_CONNECTIONS, ProblemCode.NO_SERVER}


def cfg_text() -> str:
    return HAPROXY_CFG.read_text()


def default(name: str) -> int:
    """The default deploy/haproxy.cfg sets for one of its variables (``presetenv``)."""
    found = re.search(rf'^\s*presetenv {name} "(\d+)"', cfg_text(), re.M)
    assert found, name
    return int(found[1])


def errorfile(name: str) -> tuple[RawAnswer, bytes]:
    """An errorfile, parsed, and its raw head."""
    raw = (HAPROXY_ERRORS / name).read_bytes()
    return parse_answer(raw), raw.partition(b"\r\n\r\n")[0]


def check_problem(answer: RawAnswer, status: int) -> ProblemCode:
    """``answer`` is a problem+json of ``status`` whose code is a ProblemCode with that
    status (``http-error``: any 4xx) and whose title is the code's; its code."""
    assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.headers.get("content-type") == PROBLEM_JSON, answer.headers
    problem = json.loads(answer.body)
    assert problem.keys() >= PROBLEM_MEMBERS, problem
    assert problem["status"] == status and problem["type"] == "about:blank"
    codes = {c.value: c for c in ProblemCode}
    assert problem["code"] in codes, f"{problem['code']} is not a ProblemCode"
    code = codes[problem["code"]]
    if code.status is None:
        assert 400 <= status < 500, f"{code} is for 4xx statuses only"
    else:
        assert code.status == status, f"{code} has status {code.status}, answered with {status}"
    assert problem["title"] == code.title_for(status)
    assert problem["detail"]
    return code


# --- the files, without HAProxy ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in HAPROXY_ERRORS.glob("*.http")))
def test_every_errorfile_is_a_whole_answer_with_a_problem_of_its_status(name: str) -> None:
    answer, head = errorfile(name)
    lines = head.split(b"\r\n")
    status = answer.status
    assert lines[0] == f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}".encode()
    assert all(b"\n" not in line and b":" in line for line in lines[1:]), "CRLF line ends, one header a line"
    raw = (HAPROXY_ERRORS / name).read_bytes()
    assert len(raw) - len(head) - 4 == int(answer.headers["content-length"]), "Content-Length is the body's"
    code = check_problem(answer, status)
    assert name == f"{status}-{code}.http", "a file is named by its status and code"
    if code in WITH_RETRY_AFTER:
        assert int(answer.headers["retry-after"]) >= 1
    assert answer.headers["cache-control"] == "no-store"


def test_the_config_names_an_errorfile_for_every_status_haproxy_answers_and_every_file() -> None:
    text = cfg_text()
    section = text.split("\nhttp-errors problems\n", 1)[1].split("\n\n", 1)[0]
    by_status = dict(re.findall(r"^\s*errorfile (\d+) (\S+)$", section, re.M))
    assert tuple(int(s) for s in by_status) == HAPROXY_OWN_STATUSES
    for status, path in by_status.items():
        assert path.startswith(f"{HAPROXY_ERRORS.name}/{status}-"), path
    named = set(re.findall(rf"\b{HAPROXY_ERRORS.name}/(\S+\.http)\b", text))
    assert named == {p.name for p in HAPROXY_ERRORS.glob("*.http")}, "every file is used, every file used exists"
    assert re.search(r"^\s*default-path config$", text, re.M), "file names are relative to the config"
    assert re.search(r"^\s*errorfiles problems$", text.split("\ndefaults\n", 1)[1], re.M)


def test_the_rate_limits_retry_after_lets_the_count_fall_to_zero() -> None:
    """HAProxy's rate over a period weighs in the period before: after two periods of
    silence a client counts 0, which is the Retry-After it is told."""
    period = re.search(r"store http_req_rate\((\d+)s\)", cfg_text())
    assert period
    answer, _ = errorfile(f"429-{ProblemCode.RATE_LIMITED}.http")
    assert int(answer.headers["retry-after"]) == 2 * int(period[1])


def test_compose_mounts_the_errorfiles_next_to_the_config() -> None:
    lb = yaml.safe_load((HAPROXY_CFG.parent / "compose.yaml").read_text())["services"]["lb"]
    assert f"./{HAPROXY_ERRORS.name}:/usr/local/etc/haproxy/{HAPROXY_ERRORS.name}:ro" in lb["volumes"]
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in lb["volumes"]


# --- through HAProxy ---------------------------------------------------------------------------

SERVER_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 3\r\n"
               b"Content-Length: 69\r\nConnection: close\r\n\r\n"
               b'{"type": "about:blank", "status": 503, "code": "solver-busy", "x": 1}')
MOVES = "/v1/games/penguin/moves"
HINT = "/v1/games/penguin/hint"


def get(path: str, extra: bytes = b"") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n".encode() + extra + b"\r\n"


def post(path: str, body: bytes = b"{}") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Recorder, Recorder, Balancer]]:
    """Two recorders behind HAProxy, each hanging on /hang, sending garbage on /garbage
    and answering 503 `solver-busy` on /solve."""
    install_debian_tools()
    api1 = Recorder("api1", hang=("/hang",), answers={"/garbage": b"NOT HTTP\r\n\r\n", "/solve": SERVER_BUSY})
    api2 = Recorder("api2", hang=("/hang",), answers={"/garbage": b"NOT HTTP\r\n\r\n", "/solve": SERVER_BUSY})
    balancer = None
    try:
        balancer = Balancer([api1, api2], tmp_path_factory.mktemp("edge"))
        yield api1, api2, balancer
    finally:
        if balancer is not None:
            balancer.stop()
        api1.stop()
        api2.stop()


def haproxy_version() -> tuple[int, int]:
    out = subprocess.run(["haproxy", "-v"], capture_output=True, text=True, timeout=10, check=True).stdout
    found = re.search(r"version (\d+)\.(\d+)", out)
    assert found, out
    return int(found[1]), int(found[2])


# What the balancer answers itself once a request head is read: (request, status, code).
OWN_ANSWERS = {
    "/metrics": (get("/metrics"), 404, ProblemCode.NOT_FOUND),
    "a server's garbage": (get("/garbage"), 502, ProblemCode.BAD_GATEWAY),
}
# What its HTTP/1 parser answers while it reads a head (HTML before HAProxy 3.2).
PARSER_ANSWERS = {
    "more header fields than it parses": (get("/healthz", b"".join(b"X-F%d: a\r\n" % i for i in range(1024))), 400,
                                          ProblemCode.MALFORMED_REQUEST),
    "a head over its buffer": (get("/healthz", b"X-Big: " + b"a" * 82_000 + b"\r\n"), 400, ProblemCode.MALFORMED_REQUEST),
    "an HTTP/0.9 request line": (b"GET /healthz\r\n\r\n", 400, ProblemCode.MALFORMED_REQUEST),
    "a space in a header name": (get("/healthz", b"X Y: a\r\n"), 400, ProblemCode.MALFORMED_REQUEST),
    "two Content-Length headers that differ": (
        b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", 400,
        ProblemCode.MALFORMED_REQUEST),
    "a Transfer-Encoding other than chunked alone": (
        b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 422, ProblemCode.HTTP_ERROR),
}


def wrong_answers(port: int, cases: dict[str, tuple[bytes, int, ProblemCode]]) -> list[str]:
    """The cases not answered with their status and code, as problem+json."""
    wrong = []
    for case, (request, status, code) in cases.items():
        answer = raw_exchange(port, request)
        try:
            assert check_problem(answer, status) == code
        except (AssertionError, ValueError):
            wrong.append(f"{case}: {answer.status} {answer.headers.get('content-type')}")
    return wrong


@pytest.mark.slow
def test_every_answer_the_balancer_makes_itself_past_the_head_is_a_problem(
    edge: tuple[Recorder, Recorder, Balancer],
) -> None:
    api1, api2, lb = edge
    with ExitStack() as stack:
        # The slow cases run meanwhile: a body never finished (408 after `timeout
        # http-request`), and a play request no server answers (tried on each, then 504).
        slow = stack.enter_context(connect(lb.port, 15))
        slow.sendall(post("/v1/games/penguin/validate", b'{"state": {}}')[:-3])
        hung: list[RawAnswer] = []
        hang = threading.Thread(target=lambda: hung.append(raw_exchange(lb.port, get("/hang"), 15)), daemon=True)
        hang.start()

        fields = b"".join(b"X-F%d: a\r\n" % i for i in range(1000))
        assert raw_exchange(lb.port, get("/healthz", fields)).status == 200, \
            "1,000 header fields reach the server (whose limits answer them)"
        assert not wrong_answers(lb.port, OWN_ANSWERS)
        assert check_problem(read_answer(slow), 408) == ProblemCode.REQUEST_TIMEOUT
        hang.join(15)
        (answer,) = hung
        assert check_problem(answer, 504) == ProblemCode.GATEWAY_TIMEOUT
        assert len(api1.seen("/hang") + api2.seen("/hang")) == 4, "an unanswered play request is tried 4 times"


@pytest.mark.slow
def test_the_errors_the_balancers_parser_finds_in_a_head_are_problems(
    edge: tuple[Recorder, Recorder, Balancer],
) -> None:
    """HAProxy 2.6 answers these with its built-in HTML whatever the errorfiles (its issue
    #3032, fixed in 3.3 and 3.2): there the test checks that they still are (so that it
    says when they no longer are) and reports an expected failure."""
    _, _, lb = edge
    with connect(lb.port, 15) as unfinished:
        unfinished.sendall(b"GET /healthz HTTP/1.1\r\nHost: loc")
        wrong = wrong_answers(lb.port, PARSER_ANSWERS)
        try:
            assert check_problem(read_answer(unfinished), 408) == ProblemCode.REQUEST_TIMEOUT
        except (AssertionError, ValueError):
            wrong.append("an unfinished head: not a problem")
    version = haproxy_version()
    if version < (3, 2):
        assert len(wrong) == len(PARSER_ANSWERS) + 1, f"HAProxy {version} answers some as problems now: {wrong}"
        pytest.xfail(f"HAProxy {version} answers the errors of its HTTP/1 parser in HTML: {wrong}")
    assert not wrong, wrong


@pytest.mark.slow
def test_the_balancers_parser_answers_what_it_refuses(edge: tuple[Recorder, Recorder, Balancer]) -> None:
    """Whatever its format, each refusal of the parser has the status the errorfile has."""
    _, _, lb = edge
    for case, (request, status, _) in PARSER_ANSWERS.items():
        assert raw_exchange(lb.port, request).status == status, case


@pytest.mark.slow
def test_a_servers_503_is_passed_on_never_retried(edge: tuple[Recorder, Recorder, Balancer]) -> None:
    api1, api2, lb = edge
    answer = raw_exchange(lb.port, post("/v1/games/penguin/solve"))
    assert answer.status == 503 and answer.headers["retry-after"] == "3"
    assert json.loads(answer.body)["code"] == "solver-busy"
    assert len(api1.seen("/v1/games/penguin/solve") + api2.seen("/v1/games/penguin/solve")) == 1


@pytest.mark.slow
def test_with_no_server_up_the_balancer_answers_503_no_server(tmp_path: Path) -> None:
    install_debian_tools()

    class Gone:
        name, port = "gone", free_port()  # nothing listens there

    lb = Balancer([Gone()], tmp_path, wait_up=False)
    try:
        wait_for("HAProxy to mark the server down", lambda: lb.state("gone").startswith("DOWN"), 10)
        answer = raw_exchange(lb.port, get("/healthz"))
        assert check_problem(answer, 503) == ProblemCode.NO_SERVER
        assert answer.headers["retry-after"] == "1"
    finally:
        lb.stop()


@pytest.mark.slow
def test_search_requests_past_the_rate_of_one_address_are_answered_429(
    edge: tuple[Recorder, Recorder, Balancer],
) -> None:
    api1, api2, lb = edge
    rate = default("HAPROXY_SEARCH_RATE")
    start = time.monotonic()
    answers = [raw_exchange(lb.port, post(HINT), source=OTHER_SOURCE) for _ in range(rate + 10)]
    assert time.monotonic() - start < 1.0, "the burst should fit in the table's period"
    statuses = [a.status for a in answers]
    assert statuses == [200] * rate + [429] * 10, statuses
    refused = answers[-1]
    assert check_problem(refused, 429) == ProblemCode.RATE_LIMITED
    # Another address searches, and this one plays, meanwhile.
    assert raw_exchange(lb.port, post(HINT)).status == 200
    assert raw_exchange(lb.port, post(MOVES), source=OTHER_SOURCE).status == 200
    # A client that waits as told is served again.
    time.sleep(int(refused.headers["retry-after"]))
    assert raw_exchange(lb.port, post(HINT), source=OTHER_SOURCE).status == 200
    assert len(api1.seen(HINT) + api2.seen(HINT)) == rate + 2


def closed_unanswered(s: socket.socket) -> bool:
    """The peer closed ``s`` without a byte of answer (within a second)."""
    s.settimeout(1.0)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.slow
def test_connections_past_the_limits_of_one_address_get_429_then_are_closed(
    edge: tuple[Recorder, Recorder, Balancer],
) -> None:
    """HAProxy counts a connection once a thread of its takes it, which may come after a
    later one's request: each check is tried again for up to 3 s."""
    _, _, lb = edge
    answered, most = default("HAPROXY_CLIENT_CONNECTIONS"), default("HAPROXY_CLIENT_CONNECTIONS_MAX")
    with ExitStack() as stack:
        idle = [stack.enter_context(connect(lb.port, 5, OTHER_SOURCE)) for _ in range(answered)]
        refused: list[RawAnswer] = []

        def one_more_refused() -> bool:
            answer = raw_exchange(lb.port, get("/healthz"), source=OTHER_SOURCE)
            refused.append(answer)
            return answer.status != 200

        wait_for("a request past the answered connections to be refused", one_more_refused, 3)
        assert check_problem(refused[-1], 429) == ProblemCode.TOO_MANY_CONNECTIONS
        assert refused[-1].headers["retry-after"] == "1"
        assert raw_exchange(lb.port, get("/healthz")).status == 200, "another address is served"
        idle += [stack.enter_context(connect(lb.port, 5, OTHER_SOURCE)) for _ in range(most - answered)]

        def one_more_closed() -> bool:
            return closed_unanswered(stack.enter_context(connect(lb.port, 5, OTHER_SOURCE)))

        wait_for("a connection past the most to be closed at once", one_more_closed, 3)
    wait_for("the address's connections to be counted closed",
             lambda: raw_exchange(lb.port, get("/healthz"), source=OTHER_SOURCE).status == 200, 5)


# --- the contention bench's balancer runs, bounded ---------------------------------------------

RUDE_SECONDS = 3.0
SLOW_SOCKETS = 2500


@pytest.mark.slow
def test_rude_search_clients_and_reconnecting_slow_sockets_of_one_address_leave_everyone_else_served(
    tmp_path: Path,
) -> None:
    """bench/solve_contention_bench.py's balancer runs, short: 16 and 64 solve clients of one
    address that ignore Retry-After are refused by the balancer, not the server, and leave
    the /moves p99 of another address at most TARGET_RATIO times its p99 with none (or
    RUDE_SLACK_MS over it, where that allows more), with no failed request; 2,500 slow sockets of one address that reconnect as they are closed
    leave /healthz p99 from another under a second. A p99 over a few seconds is noisy on a
    shared machine: a level that misses the ratio is measured once more, with a new
    baseline, and fails if it misses again."""
    install_debian_tools()
    from bench import solve_contention_bench as bench
    from service.http import create_app

    client = create_app().test_client()
    moves = [json.dumps(b).encode() for b in bench.bodies(client, bench.PLAY_GAME, 50)]
    state = client.post(f"/v1/games/{bench.SOLVE_GAME}/deals", json={"deal": bench.SOLVE_DEAL}).get_json()["state"]
    solve = json.dumps({"state": state}).encode()

    def measure(rude: int) -> bench.Level:
        return bench.run_rude_level(rude, 1, RUDE_SECONDS, moves, solve, tmp_path)

    pairs = []  # (the baseline, the level measured after it)
    base = measure(0)
    for rude in bench.RUDE_TARGET_LEVELS:
        level = measure(rude)
        if level.p(99) > bench.rude_target_ms(base.p(99)):
            bench.print_rude([base, level], 1, RUDE_SECONDS, bench.ATTACKER_NICE)
            print("missed: measured once more")
            base, level = measure(0), measure(rude)
        pairs.append((base, level))
    slow = bench.run_slow_sockets(SLOW_SOCKETS, RUDE_SECONDS, tmp_path)
    for base, level in pairs:
        bench.print_rude([base, level], 1, RUDE_SECONDS, bench.ATTACKER_NICE)
    bench.print_slow_sockets(slow, bench.ATTACKER_NICE)
    for base, level in pairs:
        assert not base.moves_errors and not level.moves_errors, (base.moves_errors, level.moves_errors)
        reached = sum(n for status, n in level.solves.items() if status != "429")
        assert reached * 10 < sum(level.solves.values()), f"the server got {reached} of them: {level.solves}"
        assert level.p(99) <= bench.rude_target_ms(base.p(99)), \
            f"{level.solvers} rude clients: p99 {level.p(99):.1f} ms, {base.p(99):.1f} ms with none"
    assert not slow.healthz_errors and len(slow.healthz_ms) > 10, slow.healthz_errors
    assert bench.percentile(slow.healthz_ms, 99) < bench.SLOW_SOCKETS_TARGET_MS
    assert slow.attacker["opened"] > SLOW_SOCKETS, "the balancer closed none of the slow sockets"
