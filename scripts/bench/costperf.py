# costperf.py — the costperf section: where a service delivery's CPU goes. perf samples
# `git-courier serve` (and every warm child it spawns after the attach, through its exec)
# over --costperf-n small deliveries; each sample goes in the first bucket its call chain
# matches; milliseconds per delivery, beside the /proc figure of the same deliveries.
import collections
import os
import signal
import subprocess
import time

from common import end_group, ensure_tool, log
from cost import proc_cpu_s

PERIOD_HZ = 2000
# (side, label, substrings of a frame's symbol or library); the first match wins.
BUCKETS = [
    ("child", "libgit2 init (its mbedTLS parses the system CA bundle)", ["mbedtls", "libmbed", "git_libgit2_init"]),
    ("child", "exec", ["execve", "load_elf_binary", "begin_new_exec"]),
    ("child", "dynamic loader: map, relocate, look up symbols (start and dlopen)", ["ld-linux", "_dl_"]),
    ("child", "OpenSSL and TLS (init, handshake, hashing)", ["libcrypto", "libssl"]),
    ("child", "push: repository, objects, pack (libgit2, zlib)", ["libgit2", "libz."]),
    ("child", "HTTP legs (libcurl) and the child's own code", ["libcurl", "courier::", "git-courier"]),
    ("child", "exit", ["do_exit", "exit_mmap", "_dl_fini"]),
    ("child", "page faults elsewhere", ["exc_page_fault"]),
    ("serve", "stray claims (two /proc scans per delivery)", ["children_of_self", "claim_strays", "do_task_stat",
                                                             "read_stat_at", "pidfd_parent"]),
    ("serve", "spawn (clone3 copying the service's page tables; the child until exec)",
     ["courier::sys::spawn", "copy_process", "child_main", "begin_new_exec", "execve", "exit_mmap"]),
    ("serve", "journal (SQLite writes, syncs, reads)", ["SqliteJournal", "JournalStore", "sqlite3", "libsqlite"]),
    ("serve", "HTTP API, JSON, event streams", ["on_request", "MHD_", "libmicrohttpd", "Api::", "nlohmann", "EventLog",
                                                "event_to_json", "Deliveries::"]),
    ("serve", "cgroup (mkdir, kill, events, rmdir)", ["Cgroup", "cgroup"]),
    ("serve", "supervision loop (epoll, frames, pidfd)", ["Epoll", "Supervisor::Loop", "Conversation", "read_frame",
                                                          "FrameDecoder", "ep_poll", "epoll"]),
    ("serve", "page faults (copy-on-write after clone, new thread stacks)", ["exc_page_fault"]),
    ("serve", "scheduling and futex wake-ups", ["futex", "schedule", "finish_task_switch"]),
]


class CostPerf:
    def bench_costperf(self):
        perf = ensure_tool("perf", "linux-perf")
        if not perf:
            raise RuntimeError("perf is not installed (Debian package linux-perf)")
        k = self.args.costperf_n
        log(f"costperf: perf on git-courier serve over {k} small deliveries")
        src, _ = self.gen_repo("costperf-src", "--commits", str(k + self.args.service_clients + 4))
        commits = iter(self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split())
        self.create_repo("costperf")
        url = f"{self.url_base}/costperf.git"
        self.git_push(src, url, next(commits))
        sock = os.path.join(self.tmp, "costperf-serve", "serve.sock")
        proc = self.start_service(sock, os.path.join(self.tmp, "costperf-serve"))
        data = os.path.join(self.tmp, "costperf.data")
        rec = None
        try:
            for _ in range(self.args.service_clients + 2):  # warm-ups, not sampled
                self.cost_service_delivery(sock, src, url, next(commits))
            rec = subprocess.Popen([perf, "record", "-q", "-F", str(PERIOD_HZ), "--call-graph", "dwarf,16384",
                                    "-o", data, "-p", str(proc.pid)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(1.0)  # perf attaches in the background; a delivery sent before would go unsampled
            a = proc_cpu_s(proc.pid)
            for _ in range(k):
                self.cost_service_delivery(sock, src, url, next(commits))
            b = proc_cpu_s(proc.pid)
            rec.send_signal(signal.SIGINT)
            rec.wait(timeout=120)
        finally:
            if rec and rec.poll() is None:
                end_group(rec)
            end_group(proc)
        buckets, sampled = self.costperf_buckets(perf, data, k)
        res = {"n": k, "proc_own_ms": (b[0] - a[0]) * 1000 / k, "proc_children_ms": (b[1] - a[1]) * 1000 / k,
               "perf_ms": sampled, "buckets_ms": {f"{side}: {label}": ms for (side, label), ms in buckets.items()}}
        self.results["costperf"] = res
        self.row("costperf", f"service delivery CPU by /proc (n={k})",
                 f"own threads {res['proc_own_ms']:.1f} ms, reaped children {res['proc_children_ms']:.1f} ms "
                 f"(perf sampled {sampled['serve']:.1f} + {sampled['child']:.1f} ms)")
        for (side, label), ms in sorted(buckets.items(), key=lambda kv: (kv[0][0] != "serve", -kv[1])):
            self.row("costperf", f"{'service' if side == 'serve' else 'warm child'}: {label}", f"{ms:.1f} ms")

    def costperf_buckets(self, perf, data, k):
        out = subprocess.run([perf, "script", "-i", data, "-F", "comm,ip,sym,dso"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        per = 1000.0 / PERIOD_HZ / k
        buckets = collections.Counter()
        sampled = {"serve": 0.0, "child": 0.0}
        for block in out.split("\n\n"):
            lines = [x for x in block.splitlines() if x.strip()]
            if not lines:
                continue
            # The child's command name after its exec of /proc/self/exe is "exe".
            side = "child" if lines[0].split()[0] == "exe" else "serve"
            frames = lines[1:]
            label = next((lb for sd, lb, keys in BUCKETS
                          if sd == side and any(key in f for f in frames for key in keys)), "other")
            buckets[(side, label)] += per
            sampled[side] += per
        return dict(buckets), sampled
