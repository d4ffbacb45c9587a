# small.py — the small section: N pushes of one new small commit each to one remote,
# git-courier with each pack engine against git push, interleaved; wall time,
# client CPU (the whole process tree), and where each millisecond of a
# git-courier push goes (its --json instants_ns), with counts of what it starts,
# syncs and opens (one push under strace).
import os
import random
import re
import shutil

from common import engine_of, fmt_ms, log, pct

# The command's wall time cut at the instants its --json reports
# (instants_ns, CLOCK_MONOTONIC, the clock this script reads): each segment
# from the instant before it, so that they add up to the whole exactly. The
# delivery's phases (advertise, pack, upload, as the child times them) are
# inside "child"; the rest of "child" is the child's own time outside them.
SEGMENTS = [
    ("start", "bench_spawn_ns", "main", "exec, dynamic loading, static initialisation, to main()"),
    ("early_child", "main", "early", "the signal watcher, the early child's spawn started (its supervising thread)"),
    ("checks", "early", "checked", "libgit2 loaded, git-style arguments settled (git's configuration), arguments, "
                                   "configuration, repository and revision checks"),
    ("executor", "checked", "executor", "lane directory, journal opened and recovered, executor threads"),
    ("submit", "executor", "submitted", "credentials set up, the request handed to the executor"),
    ("seat", "submitted", "seat", "journal: submitted (synced, J1); lane seat and lock"),
    ("hand_over", "seat", "job_accepted", "claim (journal), child spawned or taken warm, job frame, child accepts"),
    ("child", "job_accepted", "exited", "the child's work: advertise + pack + upload + the rest"),
    ("stop_confirm", "exited", "confirmed", "reap, end of file, cgroup empty"),
    ("turn_end", "confirmed", "outcome", "journal: finished; seat released; outcome to the command"),
    ("shutdown", "outcome", "printed", "executor shut down (threads joined, journal closed), report built"),
    ("exit", "printed", "bench_exit_ns", "tracking ref, credential bookkeeping, process exit"),
]


class SmallPush:
    def bench_small(self):
        n = self.args.n
        engines = self.args.engines
        log(f"small: {n} pushes each of git-courier (the default engine, then each of {','.join(engines)}) "
            "and git push, interleaved")
        # Commit k+1 is one small commit on top of commit k (3 files changed,
        # about a dozen new objects). The series: git-courier with no
        # --pack-engine (what users get), with each engine named, git push.
        tools = ["default"] + [f"engine:{e}" for e in engines] + ["git"]
        src, info = self.gen_repo("small-src", "--commits", str(len(tools) * (n + 1) + 2))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remote = self.create_repo("small")
        url = f"{self.url_base}/small.git"
        lanes = os.path.join(self.tmp, "lanes-small")
        self.git_push(src, url, commits[0])
        nxt = iter(commits[1:])

        cpu = {t: [] for t in tools}

        def push(tool, oid):
            if tool == "git":
                out = self.git_push(src, url, oid), None
            else:
                engine = None if tool == "default" else tool[len("engine:"):]
                out = self.courier_push(src, url, oid, lanes, engine=engine)
            cpu[tool].append(self.last_cpu_ms)
            return out
        for tool in tools:  # one warm-up push per series, not counted
            push(tool, next(nxt))
            cpu[tool].clear()
        ms = {t: [] for t in tools}
        reports = {t: [] for t in tools}
        for i in range(n):
            k = i % len(tools)
            for tool in tools[k:] + tools[:k]:  # which series goes first rotates
                oid = next(nxt)
                t, rep = push(tool, oid)
                ms[tool].append(t)
                if rep is not None:
                    reports[tool].append(rep)
                if self.rev_parse(remote, "refs/heads/main") != oid:
                    raise RuntimeError(f"small: the remote's main is not {oid} after the {tool} push")
        git_ms = ms["git"]
        courier_ms = ms["default"]
        ratio50 = pct(courier_ms, 50) / pct(git_ms, 50)
        ratio90 = pct(courier_ms, 90) / pct(git_ms, 90)
        # How sure: a bootstrap interval of the ratio of medians (fixed seed),
        # and how often git-courier won its round against git push.
        rng = random.Random(20240501)
        boot = sorted(pct([rng.choice(courier_ms) for _ in courier_ms], 50) /
                      pct([rng.choice(git_ms) for _ in git_ms], 50) for _ in range(2000))
        ci = (boot[49], boot[1949])
        wins = sum(1 for c, g in zip(courier_ms, git_ms) if c < g)
        # The default against the libgit2 engine: a difference of medians,
        # with its bootstrap interval (the goal is 2 ms; n pushes of ~100 ms
        # each resolve a few ms at best).
        diff_ci = None
        if "engine:libgit2" in ms:
            lib = ms["engine:libgit2"]
            dboot = sorted(pct([rng.choice(courier_ms) for _ in courier_ms], 50) -
                           pct([rng.choice(lib) for _ in lib], 50) for _ in range(2000))
            diff_ci = (dboot[49], dboot[1949])
        keys = ("spawn", "advertise", "pack", "upload", "stop_confirm", "total")
        series = {}
        for tool in tools:
            entry = {"median": pct(ms[tool], 50), "p90": pct(ms[tool], 90), "samples": ms[tool],
                     "ratio_median": pct(ms[tool], 50) / pct(git_ms, 50)}
            if reports[tool]:
                # Only the phases every report has: a later build may time
                # its legs otherwise (an overlapped pack and upload).
                entry["phases_median_ms"] = {k: pct([r["timings_ms"][k] for r in reports[tool]], 50) for k in keys
                                             if all(k in r.get("timings_ms", {}) for r in reports[tool])}
                entry["engine_reported"] = sorted({engine_of(r) or "(not reported)" for r in reports[tool]})
            series[tool] = entry
        for tool in tools:
            series[tool]["cpu_ms_median"] = pct(cpu[tool], 50)
            series[tool]["cpu_ms_samples"] = cpu[tool]
        cpu_ratio = pct(cpu["default"], 50) / pct(cpu["git"], 50)
        breakdown = self.small_breakdown(reports["default"])
        counts = self.small_counts(src, url, lanes, next(nxt))
        objects = pct([r["objects"] for r in reports["default"]], 50)
        self.results["small"] = {
            "n": n, "objects_per_push_median": objects, "default_engine": self.default_engine,
            "engines": engines, "series": series,
            "git_courier_ms": series["default"], "git_push_ms": series["git"],
            "ratio_median": ratio50, "ratio_p90": ratio90, "ratio_median_ci95": ci,
            "rounds_git_courier_faster": wins, "default_minus_libgit2_median_ci95_ms": diff_ci,
            "cpu_ratio_median": cpu_ratio, "breakdown_ms": breakdown, "counts": counts,
            "spread": {t: {"p10": pct(ms[t], 10), "p50": pct(ms[t], 50), "p90": pct(ms[t], 90)} for t in tools},
        }
        for tool in tools:
            label = {"default": f"git-courier push, default engine ({self.engine_label(reports['default'])}), "
                                f"1 commit (~{objects} objects, n={n})",
                     "git": f"git push, interleaved (n={n})"}.get(tool, f"git-courier push --pack-engine "
                                                                      f"{tool[len('engine:'):]} (n={n})")
            self.row("small", label, f"median {fmt_ms(series[tool]['median'])}  p90 {fmt_ms(series[tool]['p90'])}")
        self.row("small", "ratio git-courier (default engine) / git push",
                 f"median {ratio50:.2f} (95% CI {ci[0]:.2f}-{ci[1]:.2f})  p90 {ratio90:.2f}; "
                 f"faster in {wins}/{n} rounds")
        for e in engines:
            self.row("small", f"ratio git-courier --pack-engine {e} / git push",
                     f"median {series['engine:' + e]['ratio_median']:.2f}")
        for tool in tools[:-1]:
            ph = series[tool]["phases_median_ms"]
            name = "default" if tool == "default" else tool[len("engine:"):]
            self.row("small", f"git-courier phases, {name} engine (median, its --json)",
                     "  ".join(f"{k} {ph[k]:.0f}" for k in keys if k in ph) + " ms")
        self.row("small", "client CPU (user+sys, whole tree), median",
                 f"git-courier {pct(cpu['default'], 50):.1f} ms, git push {pct(cpu['git'], 50):.1f} ms: "
                 f"ratio {cpu_ratio:.2f}")
        self.row("small", "spread (p10 / p50 / p90)",
                 "; ".join(f"{'git push' if t == 'git' else 'git-courier ' + t} "
                           f"{pct(ms[t], 10):.1f}/{pct(ms[t], 50):.1f}/{pct(ms[t], 90):.1f} ms" for t in tools))
        if breakdown:
            self.row("small", "where a git-courier push's wall time goes (mean of each segment, its --json instants_ns)",
                     "  ".join(f"{k} {v:.1f}" for k, v in breakdown["segments"].items()) +
                     f"  (sum {breakdown['sum']:.1f} ms, mean wall {breakdown['wall']:.1f} ms); in child: " +
                     "  ".join(f"{k} {v:.1f}" for k, v in breakdown["child_phases"].items()) +
                     f"  rest {breakdown['child_rest']:.1f}")
            self.row("small", "outside the delivery's phases (spawn, advertise, pack, upload, stop_confirm)",
                     f"{breakdown['outside_phases']:.1f} ms of {breakdown['wall']:.1f} ms")
        if counts:
            self.row("small", "one git-courier push, counted (strace -f)",
                     "  ".join(f"{k} {v}" for k, v in counts.items()))

    def small_breakdown(self, reports):
        """The mean of each SEGMENTS piece over the reports that carry
        instants_ns (means, so that they add up to the mean wall time
        exactly, as each push's segments add up to its wall time), the
        child's split into its phases and the rest, and what lies outside
        the delivery's phases."""
        rows = [r for r in reports if isinstance(r.get("instants_ns"), dict)]
        if not rows:
            return None

        def at(r, key):
            return r[key] if key.startswith("bench_") else r["instants_ns"].get(key, 0)

        def mean(values):
            return sum(values) / len(values)

        missing = sorted({b for r in rows for _, a, b, _ in SEGMENTS if not at(r, a) or not at(r, b)})
        seg = {}
        for name, a, b, _ in SEGMENTS:
            seg[name] = mean([(at(r, b) - at(r, a)) / 1e6 if at(r, a) and at(r, b) else 0.0 for r in rows])
        phase_keys = ("advertise", "pack", "upload")
        phases = {k: mean([r["timings_ms"].get(k, 0) for r in rows]) for k in phase_keys}
        child_rest = seg["child"] - sum(phases.values())
        # Inside the phases: the spawn (seat to hello, when the child was
        # spawned for the turn), advertise, pack, upload, stop_confirm.
        inside = mean([sum(r["timings_ms"].get(k, 0) for k in ("spawn",) + phase_keys + ("stop_confirm",))
                       for r in rows])
        wall = mean([(r["bench_exit_ns"] - r["bench_spawn_ns"]) / 1e6 for r in rows])
        out = {"n": len(rows), "segments": seg, "child_phases": phases, "child_rest": child_rest, "wall": wall,
               "sum": sum(seg.values()), "inside_phases": inside, "outside_phases": wall - inside,
               "instants_missing": missing, "what": {name: what for name, _, _, what in SEGMENTS}}
        log("small: where a git-courier push's time goes (mean ms): " +
            ", ".join(f"{k} {v:.1f}" for k, v in seg.items()) +
            f"; child: advertise {phases['advertise']:.1f}, pack {phases['pack']:.1f}, upload {phases['upload']:.1f}, "
            f"rest {child_rest:.1f}")
        return out

    def small_counts(self, src, url, lanes, oid):
        """One more push of the default engine under `strace -f`: how many
        programs it executes, journal syncs (fdatasync/fsync), lane lock
        calls, and how often each process opens the source repository
        (its config file is read once per open)."""
        strace = shutil.which("strace")
        if not strace:
            self.notes.append("small: strace not found, no counts (apt-get install strace)")
            return None
        trace = os.path.join(self.tmp, "small-strace.txt")
        self.trace_prefix = [strace, "-f", "-qq", "-o", trace, "-e",
                             "trace=execve,fsync,fdatasync,flock,openat,clone3,clone"]
        try:
            self.courier_push(src, url, oid, lanes)
        finally:
            self.trace_prefix = None
        with open(trace) as f:
            lines = f.readlines()
        children = {ln.split(" ", 1)[0] for ln in lines if "__delivery-push" in ln and "execve(" in ln}
        # A successful execve is one line ending "= 0", or, when another
        # thread's call came in between, its "<... execve resumed>" line.
        execs = sum(1 for ln in lines if ("execve(" in ln or "execve resumed>" in ln) and ln.rstrip().endswith("= 0"))
        programs = sorted({m.group(1) for ln in lines for m in [re.search(r'execve\("([^"]+)"', ln)]
                           if m and "ENOENT" not in ln})
        config = f'"{os.path.join(src, "config")}"'
        reads = {"parent": 0, "child": 0}
        for ln in lines:
            if config in ln and "ENOENT" not in ln and "resumed" not in ln:
                reads["child" if ln.split(" ", 1)[0] in children else "parent"] += 1
        return {"programs_executed": execs,
                "programs": ",".join(os.path.basename(p) for p in programs),
                "syncs": sum(1 for ln in lines if re.search(r"\b(fsync|fdatasync)\(", ln) and "resumed" not in ln),
                "lane_locks": sum(1 for ln in lines if "flock(" in ln and "LOCK_EX" in ln and "resumed" not in ln),
                "repo_config_reads_parent": reads["parent"], "repo_config_reads_child": reads["child"]}
