# harness.py — the plumbing every section uses: the build, the binaries, the git server, one push by
# git-courier or by git, the in-process benchmark program, the rows of the table.
import json
import os
import platform
import subprocess
import sys
import time

from common import ROOT, SCRIPTS, children_cpu_ms, engine_of, log, run_group


class Harness:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(os.environ.get("COURIER_BUILD_DIR") or os.path.join(ROOT, "build"))
        self.rows = []      # (section, measure, value, verdict)
        self.notes = []     # printed under the table
        self.results = {}
        self.tmp = None
        self.server = None  # the server's state directory once started

    def row(self, section, measure, value, verdict=""):
        self.rows.append((section, measure, value, verdict))

    def env(self):
        """The environment of every git and git-courier run: no system or
        user git configuration, a throwaway HOME, our CA."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.path.join(self.tmp, "home"),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_SSL_CAINFO": self.ca,
            "GIT_TERMINAL_PROMPT": "0",
        }

    def run(self, cmd, check=True, **kw):
        kw.setdefault("env", self.env() if self.tmp else None)
        r = run_group(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
        return r

    def git(self, *args, **kw):
        return self.run(["git", *args], **kw)

    def bin(self, name):
        return os.path.join(self.build, name)

    def rev_parse(self, git_dir, ref):
        r = self.git("--git-dir", git_dir, "rev-parse", "--verify", "-q", ref, check=False)
        return r.stdout.strip() if r.returncode == 0 else None

    def gen_repo(self, name, *size):
        path = os.path.join(self.tmp, name)
        t0 = time.monotonic()
        out = self.run([os.path.join(SCRIPTS, "gen-repo"), path, *size]).stdout.strip()
        info = dict(kv.split("=", 1) for kv in out.split())
        info["seconds"] = time.monotonic() - t0
        return path, info

    def create_repo(self, name):
        return self.run([os.path.join(ROOT, "fixtures", "git-server"), "create-repo", self.server, name]).stdout.strip()

    def build_all(self):
        log(f"building into {self.build} (scripts/build)")
        env = dict(os.environ, COURIER_BUILD_DIR=self.build)
        r = run_group([os.path.join(SCRIPTS, "build")], env=env, stdout=sys.stderr, stderr=sys.stderr)
        if r.returncode != 0:
            sys.exit("bench: the build failed")
        for name in ("git-courier", "courier-standin", "courier-bench"):
            if not os.access(self.bin(name), os.X_OK):
                sys.exit(f"bench: {self.bin(name)} is missing after the build")

    def machine(self):
        def first(cmd):
            try:
                return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.strip()
            except OSError:
                return "unknown"
        mem_kb = 0
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kb = int(line.split()[1])
        cpu = "unknown"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        nginx = first(["sh", "-c", "PATH=$PATH:/usr/sbin nginx -v 2>&1"])
        return {
            "nproc": os.cpu_count(),
            "cpu": cpu,
            "memory_mib": mem_kb // 1024,
            "kernel": platform.release(),
            "git": first(["git", "--version"]),
            "libgit2": first(["pkg-config", "--modversion", "libgit2"]),
            "nginx": nginx,
        }

    def start_server(self):
        self.server = os.path.join(self.tmp, "srv")
        env = dict(os.environ)
        # One backend per concurrent delivery, so the server's pool is not
        # what the lanes benchmark measures.
        env["COURIER_GIT_SERVER_CGI_WORKERS"] = str(max(8, self.args.lanes))
        r = run_group([os.path.join(ROOT, "fixtures", "git-server"), "start", self.server], env=env,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            self.server = None if r.returncode == 3 else self.server
            raise RuntimeError(f"git-server start failed: {r.stderr.strip()}")
        info = dict(kv.split("=", 1) for kv in r.stdout.split())
        self.ca = info["ca_file"]
        self.url_base = info["url_base"]
        log(f"git server at {self.url_base}")

    def stop_server(self):
        if self.server:
            subprocess.run([os.path.join(ROOT, "fixtures", "git-server"), "stop", self.server])
            self.server = None

    def courier_push(self, repo, url, oid, lane_dir, deadline="60s", engine=None, journal=True):
        """One git-courier push; engine None gives no --pack-engine (the
        binary's default)."""
        cmd = [self.bin("git-courier"), "push", "--repo", repo, "--remote", url, "--ref", "refs/heads/main",
               "--oid", oid, "--ca-file", self.ca, "--lane-dir", lane_dir, "--deadline", deadline, "--json"]
        cmd += ["--pack-engine", engine] if engine else []
        # Every push keeps its journal (as by default) in this run's
        # directory; journal=False measures --no-journal.
        cmd += ["--journal", os.path.join(self.tmp, "state", "journal.sqlite")] if journal else ["--no-journal"]
        # A tracer in front (the small section's counts), when one is set.
        cmd = (getattr(self, "trace_prefix", None) or []) + cmd
        cpu0 = children_cpu_ms()
        t0 = time.monotonic_ns()
        r = self.run(cmd, check=False)
        t1 = time.monotonic_ns()
        self.last_cpu_ms = children_cpu_ms() - cpu0
        try:
            report = json.loads(r.stdout)
        except ValueError:
            raise RuntimeError(f"git-courier push printed no JSON (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
        if report.get("outcome") != "delivered":
            raise RuntimeError(f"git-courier push: {report.get('outcome')}: {report.get('reason')}")
        # Where this process started and ended it, on the clock of the
        # report's instants_ns (CLOCK_MONOTONIC): the breakdown's two ends.
        report["bench_spawn_ns"], report["bench_exit_ns"] = t0, t1
        return (t1 - t0) / 1e6, report

    def git_push(self, repo, url, oid):
        cpu0 = children_cpu_ms()
        t0 = time.monotonic_ns()
        self.git("--git-dir", repo, "push", "--quiet", url, f"{oid}:refs/heads/main")
        t1 = time.monotonic_ns()
        self.last_cpu_ms = children_cpu_ms() - cpu0
        return (t1 - t0) / 1e6

    def courier_bench(self, *args):
        r = self.run([self.bin("courier-bench"), *args], check=False)
        try:
            data = json.loads(r.stdout)
        except ValueError:
            raise RuntimeError(f"courier-bench {args[0]} exited {r.returncode} without JSON: {r.stderr[-2000:]}")
        data["exit_code"] = r.returncode
        return data

    @staticmethod
    def check_exit(section, d):
        """courier-bench exits non-zero when a run ended otherwise than
        expected; the figures are in the table, the run still failed."""
        if d["exit_code"] != 0:
            raise RuntimeError(f"courier-bench {section} exited {d['exit_code']}: some runs did not end as "
                               "expected (see the notes and bench.json)")

    @staticmethod
    def rss_kb(pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def engine_label(self, reports):
        said = sorted({engine_of(r) for r in reports if engine_of(r)})
        return "/".join(said) if said else f"{self.default_engine}, by --help"
