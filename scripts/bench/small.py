# small.py — the small section: N pushes of one new small commit each to one remote,
# git-courier with each pack engine against git push, interleaved.
import os
import random

from common import engine_of, fmt_ms, log, pct


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
        src, info = self.gen_repo("small-src", "--commits", str(len(tools) * (n + 1) + 1))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remote = self.create_repo("small")
        url = f"{self.url_base}/small.git"
        lanes = os.path.join(self.tmp, "lanes-small")
        self.git_push(src, url, commits[0])
        nxt = iter(commits[1:])

        def push(tool, oid):
            if tool == "git":
                return self.git_push(src, url, oid), None
            engine = None if tool == "default" else tool[len("engine:"):]
            return self.courier_push(src, url, oid, lanes, engine=engine)
        for tool in tools:  # one warm-up push per series, not counted
            push(tool, next(nxt))
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
        objects = pct([r["objects"] for r in reports["default"]], 50)
        self.results["small"] = {
            "n": n, "objects_per_push_median": objects, "default_engine": self.default_engine,
            "engines": engines, "series": series,
            "git_courier_ms": series["default"], "git_push_ms": series["git"],
            "ratio_median": ratio50, "ratio_p90": ratio90, "ratio_median_ci95": ci,
            "rounds_git_courier_faster": wins, "default_minus_libgit2_median_ci95_ms": diff_ci,
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
