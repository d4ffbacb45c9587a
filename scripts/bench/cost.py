# cost.py — the cost section: the client's CPU and memory per delivery, git push against a
# CLI push (cold child) and a delivery through `git-courier serve` (warm child), for one
# small commit (interleaved rounds) and for the large repository's whole history.
#
# How each figure is taken (docs/performance.md, "Client cost per delivery"):
# * git push and the CLI: os.wait4 on the top process. Its rusage holds the
#   CPU (user + system) of the process and of every descendant that was
#   waited for, so the whole tree is counted exactly when every process in it
#   is waited for by its parent. That is checked, not assumed: the bench is a
#   child subreaper (PR_SET_CHILD_SUBREAPER) while it measures, so a process
#   orphaned anywhere in the tree is handed to the bench, which reaps it and
#   adds its rusage; the run reports how many there were (0 means exact).
#   ru_maxrss of that rusage is the largest single process's peak RSS.
# * the service: utime + stime + cutime + cstime of the serve process
#   (/proc/PID/stat, clock ticks) before and after; a child the service reaps
#   (the warm child that made the delivery, with everything that child
#   reaped: its pack engine) is in cutime/cstime. Each window runs from just
#   before one submission to just before the next one's, so it holds the
#   replacement warm child's spawn too; between them only other tools run and
#   nothing asks the service anything (its idle CPU over the same run is
#   reported beside it). The bench's own HTTP client (the submitter) is the
#   caller's program and is not counted.
# * memory, summed over processes: the peak of a cgroup v1 memory group the
#   tree runs in (memory.max_usage_in_bytes). It counts every process's
#   resident memory at the same instant AND the page cache charged to the
#   group (files the tree read first or wrote: the pack, the journal), so it
#   is an upper bound of the summed resident memory, said as such.
import ctypes
import os
import statistics
import subprocess
import time

from common import end_group, fmt_mib, log, pct, service_call, service_outcome

PR_SET_CHILD_SUBREAPER = 36
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def set_subreaper(on):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def proc_cpu_s(pid):
    """(own, reaped children) CPU seconds of pid from /proc/PID/stat:
    utime+stime and cutime+cstime."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime is field 14.
    ut, st, cut, cst = (int(x) for x in fields[11:15])
    return (ut + st) * TICK_S, (cut + cst) * TICK_S


class MemoryGroup:
    """A cgroup v1 memory group beside the bench's own, or None-like when
    this machine has none the bench can make."""

    def __init__(self, name):
        self.path = None
        try:
            with open("/proc/self/cgroup") as f:
                rel = next(line.split(":", 2)[2].strip() for line in f
                           if line.split(":", 2)[1] == "memory")
            path = os.path.join("/sys/fs/cgroup/memory" + rel, name)
            os.mkdir(path)
            self.path = path
        except (OSError, StopIteration, IndexError):
            self.path = None

    def join(self, pid=0):
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                f.write(str(pid))

    def _read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return int(f.read().strip())

    def reset_peak(self):
        if self.path:
            with open(os.path.join(self.path, "memory.max_usage_in_bytes"), "w") as f:
                f.write("0")

    def peak_kb(self):
        return self._read("memory.max_usage_in_bytes") // 1024 if self.path else None

    def usage_kb(self):
        return self._read("memory.usage_in_bytes") // 1024 if self.path else None

    def remove(self):
        if self.path:
            try:
                os.rmdir(self.path)
            except OSError:
                pass
            self.path = None


class ClientCost:
    def cost_tree(self, cmd, extra_env=None, out_path=None):
        """Runs cmd (stdout to out_path) and returns its tree's CPU and
        memory: wait4 on the top process, plus any orphan the subreaper
        received (counted and reaped here)."""
        group = MemoryGroup(f"courier-bench-{os.getpid()}-{time.monotonic_ns()}")
        out = open(out_path or os.devnull, "w")
        err_path = os.path.join(self.tmp, "cost.stderr")
        err = open(err_path, "w")
        try:
            t0 = time.monotonic_ns()
            proc = subprocess.Popen(cmd, env=dict(self.env(), **(extra_env or {})), stdout=out, stderr=err,
                                    start_new_session=True, preexec_fn=(lambda: group.join(0)) if group.path else None)
            try:
                _, status, ru = os.wait4(proc.pid, 0)
            except BaseException:
                end_group(proc)
                raise
            wall = (time.monotonic_ns() - t0) / 1e6
            proc.returncode = os.waitstatus_to_exitcode(status)
            cpu = ru.ru_utime + ru.ru_stime
            maxrss = ru.ru_maxrss
            orphans = 0
            while True:  # anything orphaned in the tree was handed to the bench
                try:
                    pid, _, oru = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                orphans += 1
                cpu += oru.ru_utime + oru.ru_stime
                maxrss = max(maxrss, oru.ru_maxrss)
            mem_sum = group.peak_kb()
        finally:
            out.close()
            err.close()
            group.remove()
        if proc.returncode != 0:
            with open(err_path) as f:
                raise RuntimeError(f"{' '.join(cmd[:3])} exited {proc.returncode}: {f.read()[-1500:]}")
        return {"cpu_ms": cpu * 1000, "user_ms": ru.ru_utime * 1000, "sys_ms": ru.ru_stime * 1000,
                "max_rss_kb": maxrss, "cgroup_peak_kb": mem_sum, "orphans": orphans, "wall_ms": wall}

    def cost_git(self, src, url, oid):
        return self.cost_tree(["git", "--git-dir", src, "push", "--quiet", url, f"{oid}:refs/heads/main"])

    def cost_cli(self, src, url, oid, lanes, auth=("--auth", "none"), extra_env=None, deadline="60s"):
        report = os.path.join(self.tmp, "cost.json")
        cmd = [self.bin("git-courier"), "push", "--repo", src, "--remote", url, "--ref", "refs/heads/main",
               "--oid", oid, "--ca-file", self.ca, "--lane-dir", lanes, "--deadline", deadline, "--json", *auth,
               "--journal", os.path.join(self.tmp, "state", "journal.sqlite")]
        return self.cost_tree(cmd, extra_env, out_path=report)

    def cost_service_delivery(self, sock, src, url, oid, deadline="60s"):
        status, body = service_call(sock, "POST", "/v1/deliveries",
                                    {"repo": src, "remote": url, "ref": "refs/heads/main", "oid": oid,
                                     "deadline": deadline})
        if status != 202:
            raise RuntimeError(f"service: POST answered {status}: {body}")
        outcome = service_outcome(sock, body["id"])
        if outcome.get("outcome") != "delivered":
            raise RuntimeError(f"service: {outcome.get('outcome')}: {outcome.get('reason')}")

    def start_cost_service(self, name):
        """`git-courier serve` as the service section starts it, moved into a
        memory group of its own, then given one delivery per warm child so
        every child it holds from then on was born inside the group."""
        group = MemoryGroup(f"courier-bench-serve-{os.getpid()}-{name}")
        sock = os.path.join(self.tmp, name, "serve.sock")
        proc = self.start_service(sock, os.path.join(self.tmp, name))
        group.join(proc.pid)
        return proc, sock, group

    def bench_cost(self):
        set_subreaper(True)
        try:
            self.cost_small()
            self.cost_large()
        finally:
            set_subreaper(False)
        self.notes.append(
            "cost: CPU is user+system of every client-side process. git push and the CLI: wait4 on the top "
            "process (the whole tree: every process was waited for by its parent; the bench is a child subreaper "
            "while it measures and counts any orphan it is handed: 'orphans'). The service: the serve process's "
            "utime+stime+cutime+cstime (/proc/PID/stat) over the deliveries, divided by their count; the warm "
            "child and what it reaped are in cutime/cstime; the submitter (the bench's HTTP client, the "
            "caller's program) is not counted. Memory: 'largest process' is ru_maxrss (git push, CLI); 'group "
            "peak' is a cgroup v1 memory group's max_usage_in_bytes, which counts the page cache charged to the "
            "group (an upper bound of the processes' summed RSS).")

    def cost_small(self):
        n = self.args.n
        tools = ["git", "cli", "service"]
        log(f"cost: {n} rounds of git push, git-courier push (cold) and a service delivery (warm), one new small "
            "commit each, interleaved")
        src, _ = self.gen_repo("cost-small-src", "--commits", str(len(tools) * (n + 2) + self.args.service_clients + 4))
        commits = iter(self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split())
        remote = self.create_repo("cost-small")
        url = f"{self.url_base}/cost-small.git"
        lanes = os.path.join(self.tmp, "lanes-cost")
        self.git_push(src, url, next(commits))
        proc, sock, group = self.start_cost_service("cost-serve")
        try:
            for _ in range(self.args.service_clients):  # every warm child from now on is born in the group
                self.cost_service_delivery(sock, src, url, next(commits))
            self.cost_git(src, url, next(commits))  # warm-ups, not counted
            self.cost_cli(src, url, next(commits), lanes)
            samples = {t: [] for t in tools}
            # The idle service: its CPU over a quiet second, nothing asking it anything.
            idle0 = sum(proc_cpu_s(proc.pid))
            t_idle = time.monotonic()
            time.sleep(1.0)
            idle_rate = (sum(proc_cpu_s(proc.pid)) - idle0) / (time.monotonic() - t_idle)
            group.reset_peak()
            used_before = group.usage_kb()
            marks = []  # the service's (own, children) CPU before each submission, and one after the last window
            for i in range(n + 1):
                order = tools[i % 3:] + tools[:i % 3]
                for tool in order:
                    oid = next(commits)
                    if tool == "service":
                        marks.append(proc_cpu_s(proc.pid))
                        if i == n:
                            break  # the mark that closes the last window
                        self.cost_service_delivery(sock, src, url, oid)
                    elif i < n and tool == "git":
                        samples["git"].append(self.cost_git(src, url, oid))
                    elif i < n:
                        samples["cli"].append(self.cost_cli(src, url, oid, lanes))
                    else:
                        continue
                    if self.rev_parse(remote, "refs/heads/main") != oid:
                        raise RuntimeError(f"cost: the remote's main is not {oid} after the {tool} delivery")
            svc_peak, serve_rss = group.peak_kb(), self.rss_kb(proc.pid)
        finally:
            end_group(proc)
            self.reap_orphans()
            group.remove()
        svc = [{"cpu_ms": (sum(b) - sum(a)) * 1000, "own_ms": (b[0] - a[0]) * 1000,
                "children_ms": (b[1] - a[1]) * 1000} for a, b in zip(marks, marks[1:])]
        res = {"n": n, "tick_ms": TICK_S * 1000, "service_idle_cpu_ms_per_s": idle_rate * 1000,
               "git": self.cost_summary(samples["git"]), "cli": self.cost_summary(samples["cli"]),
               "service": {"cpu_ms_mean": statistics.fmean(s["cpu_ms"] for s in svc),
                           "own_ms_mean": statistics.fmean(s["own_ms"] for s in svc),
                           "children_ms_mean": statistics.fmean(s["children_ms"] for s in svc),
                           "cpu_ms_p10": pct([s["cpu_ms"] for s in svc], 10),
                           "cpu_ms_p90": pct([s["cpu_ms"] for s in svc], 90),
                           "group_peak_kb": svc_peak,
                           "group_peak_over_idle_kb": svc_peak - used_before if svc_peak else None,
                           "serve_rss_kb": serve_rss, "samples": svc}}
        g = res["git"]["cpu_ms_mean"]
        res["ratio_cli"] = res["cli"]["cpu_ms_mean"] / g
        res["ratio_service"] = res["service"]["cpu_ms_mean"] / g
        self.results.setdefault("cost", {})["small"] = res
        self.cost_rows_small(res)

    def reap_orphans(self, bound_s=10.0):
        """After a service is stopped: its warm children die with it
        (PR_SET_PDEATHSIG) and, the bench being a subreaper, come back here.
        Waits until none is left (bounded), so none is later counted as an
        orphan of a measured push."""
        until = time.monotonic() + bound_s
        while time.monotonic() < until:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child left at all
            if pid == 0:
                time.sleep(0.01)

    @staticmethod
    def cost_summary(samples):
        cpu = [s["cpu_ms"] for s in samples]
        return {"cpu_ms_mean": statistics.fmean(cpu), "cpu_ms_median": pct(cpu, 50), "cpu_ms_p10": pct(cpu, 10),
                "cpu_ms_p90": pct(cpu, 90), "user_ms_mean": statistics.fmean(s["user_ms"] for s in samples),
                "sys_ms_mean": statistics.fmean(s["sys_ms"] for s in samples),
                "max_rss_kb": max(s["max_rss_kb"] for s in samples),
                "group_peak_kb": pct([s["cgroup_peak_kb"] for s in samples], 50)
                if all(s["cgroup_peak_kb"] for s in samples) else None,
                "orphans": sum(s["orphans"] for s in samples), "samples": samples}

    def cost_rows_small(self, res):
        n = res["n"]
        for key, label in (("git", "git push"), ("cli", "git-courier push (CLI, cold child)")):
            s = res[key]
            self.row("cost", f"small, {label}: client CPU per push (n={n})",
                     f"mean {s['cpu_ms_mean']:.1f} ms (user {s['user_ms_mean']:.1f}, sys {s['sys_ms_mean']:.1f}; "
                     f"p10 {s['cpu_ms_p10']:.1f}, median {s['cpu_ms_median']:.1f}, p90 {s['cpu_ms_p90']:.1f}); "
                     f"largest process {fmt_mib(s['max_rss_kb'])}, group peak {fmt_mib(s['group_peak_kb'])}; "
                     f"orphans {s['orphans']}")
        s = res["service"]
        self.row("cost", f"small, service delivery (warm child): client CPU per delivery (n={n})",
                 f"mean {s['cpu_ms_mean']:.1f} ms (serve's own threads {s['own_ms_mean']:.1f}, reaped children "
                 f"{s['children_ms_mean']:.1f}; p10 {s['cpu_ms_p10']:.0f}, p90 {s['cpu_ms_p90']:.0f}, "
                 f"{res['tick_ms']:.0f} ms ticks); group peak over idle {fmt_mib(s['group_peak_over_idle_kb'])}, "
                 f"serve RSS {fmt_mib(s['serve_rss_kb'])}")
        self.row("cost", "small, service idle CPU (nothing submitted)",
                 f"{res['service_idle_cpu_ms_per_s']:.1f} ms per s")
        self.row("cost", "small, client CPU ratio to git push (means)",
                 f"CLI {res['ratio_cli']:.2f}x, service {res['ratio_service']:.2f}x")

    def cost_large(self):
        src = os.path.join(self.tmp, "large-src")
        if os.path.isdir(src):  # the large section's repository, when it ran in this run
            head = self.rev_parse(src, "refs/heads/main")
        else:
            log(f"cost: generating a repository of >= {self.args.large_objects} objects")
            src, info = self.gen_repo("large-src", "--objects", str(self.args.large_objects))
            head = info["head"]
        objects = int(self.git("--git-dir", src, "rev-list", "--objects", "--count", "main").stdout.strip())
        tools = ["git"] + [f"cli:{a}" for a in self.args.large_auth] + ["service"]
        every = {t: [] for t in tools}
        for k in range(self.args.large_runs):
            order = tools[k % len(tools):] + tools[:k % len(tools)]  # which goes first rotates
            for i, tool in enumerate(order):
                log(f"cost: large, run {k + 1}: {tool}")
                every[tool].append(self.cost_large_one(tool, src, head, f"cost-large-{k}-{i}"))
        # The run of median CPU stands for each tool.
        runs = {t: sorted(rs, key=lambda r: r["cpu_ms"])[(len(rs) - 1) // 2] for t, rs in every.items()}
        for t, rs in every.items():
            runs[t]["cpu_ms_all"] = [r["cpu_ms"] for r in rs]
        g = runs["git"]["cpu_ms"]
        res = {"objects": objects, "runs": runs, "n": self.args.large_runs,
               "ratio": {t: runs[t]["cpu_ms"] / g for t in tools if t != "git"}}
        self.results.setdefault("cost", {})["large"] = res
        for tool in tools:
            r = runs[tool]
            label = {"git": "git push", "service": "service delivery (warm child, --auth none)"}.get(tool) or \
                f"git-courier push --auth {tool.split(':')[1]}"
            mem = (f"largest process {fmt_mib(r['max_rss_kb'])}, group peak {fmt_mib(r['cgroup_peak_kb'])}"
                   if tool != "service" else f"group peak over idle {fmt_mib(r['group_peak_over_idle_kb'])}")
            ratio = "" if tool == "git" else f" ({res['ratio'][tool]:.2f}x git push)"
            self.row("cost", f"large ({objects} objects), {label}: client CPU (median of {res['n']})",
                     f"{r['cpu_ms'] / 1000:.2f} s{ratio} (wall {r['wall_ms'] / 1000:.2f} s); {mem}")

    def cost_large_one(self, tool, src, head, name):
        remote = self.create_repo(name)
        url = f"{self.url_base}/{name}.git"
        if tool == "git":
            r = self.cost_git(src, url, head)
        elif tool == "service":
            r = self.cost_large_service(src, url, head)
        else:
            auth_args, extra = self.auth_setup(tool.split(":")[1])
            r = self.cost_cli(src, url, head, os.path.join(self.tmp, "lanes-cost-large"), tuple(auth_args), extra,
                              deadline=self.args.large_deadline)
        if self.rev_parse(remote, "refs/heads/main") != head:
            raise RuntimeError(f"cost: {name}: main is not {head} after the {tool} push")
        subprocess.run(["rm", "-rf", remote])
        return r

    def cost_large_service(self, src, url, head):
        proc, sock, group = self.start_cost_service("cost-serve-large")
        try:
            # Warm children born in the group: deliveries of the history's
            # first commits to a throwaway remote.
            first = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
            warm = f"cost-large-warm-{time.monotonic_ns()}"  # a new one per service started
            self.create_repo(warm)
            warm_url = f"{self.url_base}/{warm}.git"
            for oid in first[:self.args.service_clients]:
                self.cost_service_delivery(sock, src, warm_url, oid)
            group.reset_peak()
            before_kb = group.usage_kb()
            a = proc_cpu_s(proc.pid)
            t0 = time.monotonic_ns()
            self.cost_service_delivery(sock, src, url, head, deadline=self.args.large_deadline)
            wall = (time.monotonic_ns() - t0) / 1e6
            b = proc_cpu_s(proc.pid)
            peak = group.peak_kb()
        finally:
            end_group(proc)
            self.reap_orphans()
            group.remove()
        return {"cpu_ms": (sum(b) - sum(a)) * 1000, "own_ms": (b[0] - a[0]) * 1000,
                "children_ms": (b[1] - a[1]) * 1000, "wall_ms": wall,
                "group_peak_over_idle_kb": peak - before_kb if peak else None}
