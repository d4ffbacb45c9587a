# common.py — what every section of scripts/bench shares: the sections and their
# defaults, formatting of figures, the service client over its Unix socket,
# the pack engines a binary takes, process groups started and ended whole.
import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import http.client
import subprocess
import sys

# This file is scripts/bench/common.py: the repository is three levels up.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
SECTIONS = ["startup", "small", "journal", "inproc", "large", "stop", "spawn", "lanes", "service", "fleet", "ssh",
            "cost", "costperf", "scale", "curve"]
# Run unless --only names others; curve only with --scale-curve or --only
# curve; service, fleet, ssh, scale and cost only when named (cost pushes the
# large repository's whole history seven times: minutes, not seconds).
DEFAULT_SECTIONS = [s for s in SECTIONS if s not in ("curve", "service", "fleet", "ssh", "cost", "costperf", "scale")]
AUTH_MODES = ["none", "bearer", "credential", "key"]
# What --baseline-build measures again with the earlier binaries.
BEFORE_SECTIONS = ["startup", "stop", "spawn", "lanes"]
STOP_TARGET_MS = 5.0
# REVOKE_JOURNAL_BOUND (J1): a revocation's kill waits at most this long for its journal write.
REVOKE_JOURNAL_BOUND_MS = 5.0


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def pct(samples, p):
    """Nearest-rank percentile (the same rule as courier-bench)."""
    if not samples:
        return float("nan")
    s = sorted(samples)
    rank = min(len(s), max(1, math.ceil(p / 100.0 * len(s))))
    return s[rank - 1]


def fmt_ms(v):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f} ms"


def fmt_mib(kib):
    return "n/a" if kib is None else f"{kib / 1024:.1f} MiB"


def fmt_load(avg):
    return "/".join(f"{x:.2f}" for x in avg)


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix socket: the service's API (docs/service.md)."""

    def __init__(self, path, timeout=120):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


def service_call(path, method, target, body=None):
    """One request to the service: (status, parsed JSON body)."""
    conn = UnixHTTPConnection(path)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, target, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = conn.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, {"raw": raw.decode(errors="replace")}
    finally:
        conn.close()


def service_outcome(path, delivery):
    """Follows a delivery's events to its finished event: its outcome."""
    conn = UnixHTTPConnection(path)
    try:
        conn.request("GET", f"/v1/deliveries/{delivery}/events")
        r = conn.getresponse()
        if r.status != 200:
            raise RuntimeError(f"events of {delivery}: HTTP {r.status}")
        while True:
            line = r.readline()
            if not line:
                raise RuntimeError(f"events of {delivery} ended without finished")
            e = json.loads(line)
            if e.get("event") == "finished":
                return e["outcome"]
    finally:
        conn.close()


class OverBudget(RuntimeError):
    """A measured run still going when its time budget ended."""


def engine_of(report):
    """The pack engine a git-courier --json report says ran, if it says: the
    first string field whose name mentions the engine."""
    for key, value in report.items():
        if "engine" in key and isinstance(value, str):
            return value
    return None


def meminfo(field):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def ensure_tool(program, package):
    """The path of `program`, installing the Debian `package` with apt-get
    (as scripts/bootstrap does: as root, or through sudo) when it is
    missing; None when it cannot be had."""
    found = shutil.which(program)
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if sudo is None or not shutil.which("apt-get"):
        log(f"{program} is missing and cannot be installed here (no apt-get, or not root and no sudo)")
        return None
    log(f"{program} is missing: installing the Debian package {package}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in ([*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
                [*sudo, "apt-get", "update", "-qq"],
                [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", package]):
        r = run_group(cmd, env=env, stdout=sys.stderr, stderr=sys.stderr)
        if cmd[-1] == package and r.returncode == 0:
            break
    return shutil.which(program)


def pack_engines(courier):
    """The pack engines `git-courier push` accepts and its default, read from
    its --help: `[--pack-engine A|B|C]` and `ENGINE ... NAME (default)`."""
    r = subprocess.run([courier, "push", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"--pack-engine ([\w|]+)\]", r.stdout)
    engines = m.group(1).split("|") if m else ["libgit2"]
    block = r.stdout[r.stdout.find("--pack-engine ENGINE"):]
    d = re.search(r"(\w+) \(default\)", block)
    default = d.group(1) if d and d.group(1) in engines else engines[0]
    return engines, default


def parse_duration(text):
    m = re.fullmatch(r"(\d+)(ms|s|m)", text)
    if not m:
        raise argparse.ArgumentTypeError("a duration like 600s or 10m")
    return text


def children_cpu_ms():
    """User + system CPU of this process's reaped children so far, in ms:
    the difference around one command is that command's whole tree (each
    process counts once its parent has reaped it: git-courier reaps its
    delivery child, git its remote helper and pack-objects)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000.0


def run_group(cmd, input=None, timeout=None, **kw):
    """subprocess.run, but the command runs in a session of its own and an
    interruption (Ctrl-C, TERM, an error) ends its whole process group, so
    no helper it started (ninja's compilers, git's remote helpers, a
    stand-in child) outlives this script."""
    proc = subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.PIPE if input is not None else None, **kw)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:
        end_group(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def end_group(proc):
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
