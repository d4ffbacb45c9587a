# api_conformance.py — scripts/check-api --live: a real `git-courier serve`
# asked every documented request and the bad inputs, each answer validated
# against the API document (docs/api/openapi.json). Every wait is on a fact:
# the service's "listening" and "tcp_listening" log lines, the fixture
# server's announcement of a held POST, the end of an event stream. Python 3
# standard library plus python3-jsonschema.
import http.client
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

TIMEOUT_S = 60
MAX_SEQ = 2**53
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "Courier Test", "GIT_AUTHOR_EMAIL": "courier-test@example.invalid",
    "GIT_COMMITTER_NAME": "Courier Test", "GIT_COMMITTER_EMAIL": "courier-test@example.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000",
}


class UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over the service's Unix socket (the host is ignored)."""

    def __init__(self, path):
        super().__init__("localhost", timeout=TIMEOUT_S)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT_S)
        self.sock.connect(self.unix_path)


class Answer:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw

    @property
    def content_type(self):
        return self.headers.get("Content-Type") or ""

    def json(self):
        return json.loads(self.raw)

    def lines(self):
        return [json.loads(line) for line in self.raw.decode("utf-8").split("\n") if line]


class Lines:
    """A process's output lines, read by a thread of its own."""

    def __init__(self, stream, keep):
        self.queue, self.keep = queue.Queue(), keep
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.keep.append(line.rstrip("\n"))
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def wait(self, want, what):
        """The first line for which want(line) holds; raises when the stream ends or TIMEOUT_S passes."""
        until = time.monotonic() + TIMEOUT_S
        while True:
            try:
                line = self.queue.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no {what} within {TIMEOUT_S} s")
            if line is None:
                raise RuntimeError(f"the stream ended before {what}")
            if want(line):
                return line


def json_line(line):
    try:
        j = json.loads(line)
        return j if isinstance(j, dict) else {}
    except ValueError:
        return {}


class Scene:
    """A temporary directory with a fixture git server, a source repository
    under the service's root, and `git-courier serve` on a Unix socket (and
    loopback TCP with a token)."""

    def __init__(self, root, binary):
        # Under /tmp, not $TMPDIR: the suite's own temporary directory is
        # 0700, and another uid must reach the socket at all for the peer
        # check to be what refuses it (as X-SVC1's test does).
        self.dir = tempfile.mkdtemp(prefix="courier-test-api-", dir="/tmp")
        self.root, self.binary = root, binary
        self.service = self.fixture = None
        self.log, self.fixture_log = [], []

    def git(self, *args, cwd=None):
        env = dict(GIT_ENV, PATH="/usr/bin:/bin", HOME=self.dir)
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    def start(self):
        for d in ("repos", "remotes", "fixture", "run", "state", "lanes"):
            os.makedirs(os.path.join(self.dir, d), mode=0o700)
        self.source = os.path.join(self.dir, "repos", "source")
        self.git("init", "-q", "--initial-branch=main", self.source)
        for n in (1, 2, 3):
            with open(os.path.join(self.source, "file.txt"), "a") as f:
                f.write(f"line {n}\n")
            self.git("add", "file.txt", cwd=self.source)
            self.git("commit", "-q", "-m", f"commit {n}", cwd=self.source)
        bare = os.path.join(self.dir, "remotes", "r.git")
        self.git("init", "-q", "--bare", "--initial-branch=main", bare)
        self.git("--git-dir", bare, "config", "http.receivepack", "true")
        self.start_fixture()
        self.remote = f"http://127.0.0.1:{self.port}/r.git"
        self.start_service()

    def start_fixture(self):
        self.fixture = subprocess.Popen(
            ["python3", os.path.join(self.root, "fixtures", "git_http_server.py"), "--root",
             os.path.join(self.dir, "remotes"), "--state-dir", os.path.join(self.dir, "fixture"), "--plain-http"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            env=dict(GIT_ENV, PATH="/usr/bin:/bin", HOME=self.dir, LANG="C"))
        self.fixture_lines = Lines(self.fixture.stdout, self.fixture_log)
        ready = self.fixture_lines.wait(lambda l: json_line(l).get("event") == "ready", "fixture server ready")
        self.port = json_line(ready)["port"]

    def fixture_command(self, cmd):
        self.fixture.stdin.write(json.dumps(cmd) + "\n")
        self.fixture.stdin.flush()
        return json_line(self.fixture_lines.wait(lambda l: json_line(l).get("reply") == cmd["cmd"],
                                                 f"the fixture's reply to {cmd['cmd']}"))

    def start_service(self):
        self.socket = os.path.join(self.dir, "run", "serve.sock")
        self.token = "api-conformance-token-0123456789"
        token_file = os.path.join(self.dir, "token")
        with open(token_file, "w") as f:
            f.write(self.token + "\n")
        os.chmod(token_file, 0o600)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C", "HOME": self.dir}
        if os.environ.get("TMPDIR"):
            env["TMPDIR"] = os.environ["TMPDIR"]  # where a mutation run's switch is
        # One worker and one waiting at most: with a delivery held at its
        # POST, one queued fills the queue, so the next submission is 429.
        self.service = subprocess.Popen(
            [self.binary, "serve", "--repo-root", os.path.join(self.dir, "repos"), "--socket", self.socket,
             "--journal", os.path.join(self.dir, "state", "journal.sqlite"), "--lane-dir",
             os.path.join(self.dir, "lanes"), "--allow-http-loopback", "--workers", "1", "--max-queued", "1",
             "--listen", "127.0.0.1:0", "--api-token-file", token_file,
             "--credential", "elsewhere=credential", "--credential-scope", "elsewhere=https://git.example/"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1,
            env=env)
        lines = Lines(self.service.stderr, self.log)
        tcp = lines.wait(lambda l: json_line(l).get("event") == "tcp_listening", "the service's tcp_listening")
        self.tcp_port = json_line(tcp)["port"]
        lines.wait(lambda l: json_line(l).get("event") == "listening", "the service's listening")

    def request(self, method, path, body=None, tcp=False, token=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.tcp_port, timeout=TIMEOUT_S) if tcp \
            else UnixConnection(self.socket)
        headers = {}
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = body if isinstance(body, (bytes, str)) else json.dumps(body)
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            return Answer(r.status, r.msg, r.read())  # r.msg: headers by any case
        finally:
            conn.close()

    def stop(self):
        """SIGTERM, the exit code (bounded wait)."""
        self.service.send_signal(signal.SIGTERM)
        return self.service.wait(timeout=TIMEOUT_S)

    def close(self):
        for p, stop in ((self.service, lambda p: p.send_signal(signal.SIGTERM)),
                        (self.fixture, lambda p: p.stdin.close())):
            if p is None or p.poll() is not None:
                continue
            try:
                stop(p)
                p.wait(timeout=TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired):
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Checker:
    """Validates each answer against the document and the route table, and
    keeps what was seen."""

    def __init__(self, doc, table):
        self.doc, self.table = doc, table
        self.problems, self.seen = [], set()
        self.validators = {}

    def validator(self, schema):
        key = json.dumps(schema, sort_keys=True)
        if key not in self.validators:
            self.validators[key] = self.doc.schema_validator(schema)
        return self.validators[key]

    def invalid(self, schema, value):
        errors = list(self.validator(schema).iter_errors(value))
        return "; ".join(f"at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}"
                         for e in errors[:3])

    def fail(self, what, text):
        self.problems.append(f"{what}: {text}")

    def responses_for(self, method, pattern):
        if pattern is None:
            return self.doc.doc.get("x-router-answers", {}).get("responses", {}), self.table["router"]
        op = self.doc.operation(method, pattern) or {}
        route = next((r for r in self.table["routes"] if r["method"] == method and r["path"] == pattern), None)
        statuses = dict(route["statuses"]) if route else {}
        for status, codes in self.table["adapter"].items():
            statuses[status] = statuses.get(status, []) + codes
        return op.get("responses", {}), statuses

    def check(self, what, method, pattern, answer, want=None):
        """`answer` to METHOD PATTERN (None: a request no route takes) is one
        the document gives, and valid against its schema; `want`: the status
        this request must get. Returns the answer."""
        what = f"{what} ({method} {pattern or 'unrouted'} -> {answer.status})"
        self.seen.add((method, pattern, str(answer.status)))
        if want is not None and answer.status != want:
            self.fail(what, f"expected {want}: {answer.raw[:300]!r}")
        responses, statuses = self.responses_for(method, pattern)
        if str(answer.status) not in statuses:
            self.fail(what, "the service answered a status its route table does not give this route")
        response = self.doc.resolve(responses.get(str(answer.status)))
        if response is None:
            self.fail(what, "the document gives this route no such status")
            return answer
        media = response.get("content", {})
        ctype = answer.content_type
        if ctype not in media:
            self.fail(what, f"Content-Type {ctype!r} is not one the document gives ({', '.join(media)})")
            return answer
        self.check_headers(what, response, answer)
        self.check_body(what, media[ctype], ctype, answer)
        return answer

    def check_headers(self, what, response, answer):
        for name, header in response.get("headers", {}).items():
            if header.get("required") and name not in answer.headers:
                self.fail(what, f"no {name} header, which the document gives this answer")

    def check_body(self, what, media, ctype, answer):
        line_schema = media.get("x-ndjson-line-schema")
        if line_schema is not None:
            try:
                lines = answer.lines()
            except ValueError as e:
                self.fail(what, f"a line of the stream is not JSON: {e}")
                return
            for n, line in enumerate(lines, 1):
                bad = self.invalid(line_schema, line)
                if bad:
                    self.fail(what, f"event line {n} {json.dumps(line)[:200]} is not an EventLine: {bad}")
            return
        try:
            body = answer.json() if ctype == "application/json" else answer.raw.decode("utf-8")
        except ValueError as e:
            self.fail(what, f"the body is not {ctype}: {e}")
            return
        bad = self.invalid(media.get("schema", {}), body)
        if bad:
            self.fail(what, f"the body does not match the document's schema: {bad}")

    def unexercised(self):
        """The documented (route, status) pairs no request got (said, not failed)."""
        out = []
        for r in self.table["routes"]:
            op = self.doc.operation(r["method"], r["path"]) or {}
            for status in op.get("responses", {}):
                if (r["method"], r["path"], status) not in self.seen:
                    out.append(f"{r['method']} {r['path']} {status}")
        return out


def code_of(answer):
    try:
        return answer.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def expect(c, what, answer, code=None, field=None):
    """The error answer says `code` (and `field`)."""
    if code is not None and code_of(answer) != code:
        c.fail(what, f"expected code {code}: {answer.raw[:300]!r}")
    if field is not None and code_of(answer) is not None and answer.json()["error"].get("field") != field:
        c.fail(what, f"expected field {field}: {answer.raw[:300]!r}")


def body(s, **more):
    b = {"repo": s.source, "remote": s.remote, "ref": "refs/heads/main", "rev": "HEAD"}
    b.update(more)
    return b


def step_look(s, c):
    """Health, metrics, the list and its query, a request no route takes."""
    c.check("health", "GET", "/healthz", s.request("GET", "/healthz"), 200)
    c.check("metrics", "GET", "/metrics", s.request("GET", "/metrics"), 200)
    c.check("the list", "GET", "/v1/deliveries", s.request("GET", "/v1/deliveries"), 200)
    q = f"/v1/deliveries?state=finished&remote={s.remote}&limit=5"
    c.check("the list filtered", "GET", "/v1/deliveries", s.request("GET", q), 200)
    for query, code, field in (("state=sleeping", "bad_field", "state"), ("limit=0", "bad_field", "limit"),
                               ("limit=abc", "bad_field", "limit"), ("remote=ftp://x/r.git", "bad_remote", "remote")):
        a = c.check(f"the list ?{query}", "GET", "/v1/deliveries", s.request("GET", "/v1/deliveries?" + query), 400)
        expect(c, f"the list ?{query}", a, code, field)
    expect(c, "no route", c.check("no route", "GET", None, s.request("GET", "/v2/nothing"), 404), "not_found")
    a = c.check("a method the path does not take", "PUT", None, s.request("PUT", "/v1/deliveries", "{}"), 405)
    expect(c, "PUT /v1/deliveries", a, "method_not_allowed")
    if a.headers.get("Allow") != "POST, GET":
        c.fail("PUT /v1/deliveries", f"Allow is {a.headers.get('Allow')!r}, not the path's methods 'POST, GET'")
    a = c.check("an id that is no delivery id", "GET", None, s.request("GET", "/v1/deliveries/bad%20id"), 404)
    expect(c, "GET /v1/deliveries/bad%20id", a, "not_found")


def step_refusals(s, c):
    """Every refusal of a submission the service can make from one request."""
    cases = [
        ("not JSON", "{", 400, "bad_json", None),
        ("not an object", "[]", 400, "bad_json", None),
        ("a key twice", '{"repo": "/a", "repo": "/b"}', 400, "bad_json", None),
        ("an unknown field", body(s, colour="blue"), 400, "unknown_field", "colour"),
        ("no fields", {}, 400, "missing_field", "repo"),
        ("a negative deadline", body(s, deadline=-5), 400, "bad_field", "deadline"),
        ("a deadline over 24 h", body(s, deadline="25h"), 400, "bad_field", "deadline"),
        ("a bad id", body(s, id="a b"), 400, "bad_field", "id"),
        ("both oid and rev", body(s, oid="0" * 40), 400, "bad_field", "oid"),
        ("an unknown credential", body(s, credential="nobody"), 400, "unknown_credential", "credential"),
        ("a refused scheme", body(s, remote="ftp://127.0.0.1/r.git"), 400, "bad_remote", "remote"),
        ("a repository outside the root", body(s, repo="/"), 403, "repo_outside_root", "repo"),
        ("a credential out of its scope", body(s, credential="elsewhere"), 403, "credential_out_of_scope",
         "credential"),
        ("a body over 64 KiB", json.dumps(body(s, ref="refs/heads/" + "x" * 70000)), 413, "body_too_large", None),
    ]
    for what, b, status, code, field in cases:
        a = c.check(f"POST {what}", "POST", "/v1/deliveries", s.request("POST", "/v1/deliveries", b), status)
        expect(c, f"POST {what}", a, code, field)
        if status == 400 and code_of(a) == code and "errors" not in a.json():
            c.fail(f"POST {what}", "a refused submission lists every refusal in errors")


def step_deliver(s, c):
    """A delivery followed to its outcome; the same id replayed, and used
    for another ref."""
    a = c.check("a submission", "POST", "/v1/deliveries",
                s.request("POST", "/v1/deliveries", body(s, id="api-1", rev="HEAD~1")), 202)
    ev = c.check("its events", "GET", "/v1/deliveries/{id}/events", s.request("GET", "/v1/deliveries/api-1/events"),
                 200)
    lines = ev.lines() if ev.status == 200 else []
    if not lines or lines[-1].get("event") != "finished":
        c.fail("the events of api-1", f"the stream does not end with finished: {ev.raw[-300:]!r}")
    elif lines[-1]["outcome"].get("outcome") != "delivered":
        c.fail("the events of api-1", f"not delivered: {json.dumps(lines[-1])[:300]}")
    c.check("the delivery", "GET", "/v1/deliveries/{id}", s.request("GET", "/v1/deliveries/api-1"), 200)
    c.check("the list", "GET", "/v1/deliveries", s.request("GET", "/v1/deliveries?state=finished"), 200)
    replay = s.request("POST", "/v1/deliveries", body(s, id="api-1", rev="HEAD~1"))
    c.check("the same id again", "POST", "/v1/deliveries", replay, 200)
    a = c.check("the id for another ref", "POST", "/v1/deliveries",
                s.request("POST", "/v1/deliveries", body(s, id="api-1", rev="HEAD~1", ref="refs/heads/other")), 409)
    expect(c, "the id for another ref", a, "id_conflict", "id")
    return lines


def step_cursors(s, c, lines):
    """?after= as a number and as GEN:SEQ; malformed and oversized cursors."""
    path = "/v1/deliveries/{id}/events"
    if lines:
        first = lines[0]
        a = c.check("after the first event", "GET", path,
                    s.request("GET", f"/v1/deliveries/api-1/events?after={first['seq']}"), 200)
        if a.status == 200 and any(l.get("seq", 0) <= first["seq"] and l.get("gen") == first.get("gen")
                                   for l in a.lines()):
            c.fail("after the first event", "an event at or before the cursor came again")
        if "gen" in first:
            c.check("after GEN:SEQ", "GET", path,
                    s.request("GET", f"/v1/deliveries/api-1/events?after={first['gen']}:{first['seq']}"), 200)
    for cursor in ("abc", "-1", "1.5", "99999999999999999999", str(MAX_SEQ + 1), "zz:1", "a" * 33 + ":1", "1:",
                   ":1", "1:2:3"):
        what = f"?after={cursor}"
        a = c.check(what, "GET", path, s.request("GET", f"/v1/deliveries/api-1/events?after={cursor}"), 400)
        expect(c, what, a, "bad_field", "after")


def step_unknown(s, c):
    """An id the service never had: 404 on every route that names one."""
    for method, pattern, path in (("GET", "/v1/deliveries/{id}", "/v1/deliveries/no-such"),
                                  ("GET", "/v1/deliveries/{id}/events", "/v1/deliveries/no-such/events"),
                                  ("DELETE", "/v1/deliveries/{id}", "/v1/deliveries/no-such"),
                                  ("DELETE", "/v1/deliveries/{id}", "/v1/deliveries/no-such")):
        expect(c, f"{method} {path}", c.check(f"{method} an unknown id", method, pattern, s.request(method, path),
                                              404), "not_found")


def held(s):
    """The fixture's next held POST (its request number)."""
    line = s.fixture_lines.wait(lambda l: json_line(l).get("event") == "held", "a held POST at the fixture")
    return json_line(line)["request"]


def step_revoke(s, c):
    """A running delivery (its POST held at the server) and a queued one
    revoked, each twice; a full queue; a finished one revoked."""
    s.fixture_command({"cmd": "hold", "method": "POST", "path": "git-receive-pack"})
    c.check("a submission held at its POST", "POST", "/v1/deliveries",
            s.request("POST", "/v1/deliveries", body(s, id="api-2")), 202)
    held(s)
    c.check("a queued submission", "POST", "/v1/deliveries",
            s.request("POST", "/v1/deliveries", body(s, id="api-3", ref="refs/heads/queued")), 202)
    a = c.check("a submission past --max-queued", "POST", "/v1/deliveries",
                s.request("POST", "/v1/deliveries", body(s, id="api-4", ref="refs/heads/full")), 429)
    expect(c, "a submission past --max-queued", a, "queue_full")
    c.check("the queued delivery", "GET", "/v1/deliveries/{id}", s.request("GET", "/v1/deliveries/api-3"), 200)
    for id_ in ("api-3", "api-3", "api-2", "api-2"):
        c.check(f"DELETE {id_}", "DELETE", "/v1/deliveries/{id}", s.request("DELETE", f"/v1/deliveries/{id_}"), 200)
    c.check("the revoked delivery", "GET", "/v1/deliveries/{id}", s.request("GET", "/v1/deliveries/api-2"), 200)
    for id_ in ("api-2", "api-3"):
        c.check(f"the events of {id_}", "GET", "/v1/deliveries/{id}/events",
                s.request("GET", f"/v1/deliveries/{id_}/events"), 200)
    c.check("DELETE a finished delivery", "DELETE", "/v1/deliveries/{id}",
            s.request("DELETE", "/v1/deliveries/api-1"), 200)


def step_unauthorized(s, c):
    """Over TCP without the token every route is 401; with it, served."""
    for r in c.table["routes"]:
        path = r["path"].replace("{id}", "api-1")
        a = s.request(r["method"], path, "{}" if r["method"] == "POST" else None, tcp=True)
        expect(c, f"TCP without a token: {r['method']} {path}",
               c.check("TCP without a token", r["method"], r["path"], a, 401), "unauthorized")
    a = s.request("GET", "/v1/deliveries/api-1", tcp=True, token=s.token)
    c.check("TCP with the token", "GET", "/v1/deliveries/{id}", a, 200)


def request_as_nobody(s, method, path):
    """One request over the Unix socket as uid 65534 (curl under setpriv)."""
    r = subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl", "-sS",
                        "-i", "--max-time", str(TIMEOUT_S), "--unix-socket", s.socket, "-X", method,
                        "http://localhost" + path], capture_output=True, timeout=TIMEOUT_S + 5)
    head, _, raw = r.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = http.client.HTTPMessage()
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip()] = value.strip()
    return Answer(status, headers, raw)


def step_peer(s, c):
    """On the Unix socket a uid the service does not allow gets 403
    peer_refused on every route (as root only: it calls as another uid)."""
    if os.geteuid() != 0:
        print("check-api: not root: 403 peer_refused is not sent (it needs a request as another uid)")
        return
    # Let another user reach the socket at all: the peer check must refuse it.
    os.chmod(s.dir, 0o711)
    os.chmod(os.path.dirname(s.socket), 0o751)
    os.chmod(s.socket, 0o666)
    for r in c.table["routes"]:
        path = r["path"].replace("{id}", "api-1")
        a = c.check("another uid", r["method"], r["path"], request_as_nobody(s, r["method"], path), 403)
        expect(c, f"another uid: {r['method']} {path}", a, "peer_refused")


def step_drain(s, c):
    """SIGTERM with a delivery running: health says draining, a submission
    is 503 draining; the service exits 0 once the delivery finishes."""
    s.fixture_command({"cmd": "hold", "method": "POST", "path": "git-receive-pack"})
    c.check("a submission held at its POST", "POST", "/v1/deliveries",
            s.request("POST", "/v1/deliveries", body(s, id="api-5", ref="refs/heads/drain")), 202)
    request = held(s)
    s.service.send_signal(signal.SIGTERM)
    until = time.monotonic() + TIMEOUT_S
    while True:
        a = c.check("health while stopping", "GET", "/healthz", s.request("GET", "/healthz"), 200)
        if a.status != 200 or a.json().get("status") == "draining" or time.monotonic() > until:
            break
    if a.status == 200 and a.json().get("status") != "draining":
        c.fail("health after SIGTERM", "never said draining")
    a = c.check("a submission while draining", "POST", "/v1/deliveries",
                s.request("POST", "/v1/deliveries", body(s, id="api-6", ref="refs/heads/late")), 503)
    expect(c, "a submission while draining", a, "draining")
    s.fixture_command({"cmd": "release", "request": request})
    code = s.service.wait(timeout=TIMEOUT_S)
    if code != 0:
        c.fail("the drain", f"the service exited {code}, not 0")


def run(root, binary, doc, table):
    """The conformance test: the problems found (empty: conformant)."""
    s, c = Scene(root, binary), Checker(doc, table)
    try:
        s.start()
        step_look(s, c)
        step_refusals(s, c)
        lines = step_deliver(s, c)
        step_cursors(s, c, lines)
        step_unknown(s, c)
        step_revoke(s, c)
        step_unauthorized(s, c)
        step_peer(s, c)
        step_drain(s, c)
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
        c.fail("the conformance run stopped", f"{type(e).__name__}: {e}")
    finally:
        s.close()
    if c.problems:
        c.problems.append("the service's log, last lines:\n  " + "\n  ".join(s.log[-30:]))
    else:
        print(f"check-api: {len(c.seen)} (route, status) pairs answered as documented; not sent here (they need "
              f"a full connection cap or a credential that cannot be loaded): {', '.join(c.unexercised())}")
    return c.problems
