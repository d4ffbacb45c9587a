# stop.py — the stop section (courier-bench stop): deadline -> SIGKILL, deadline -> seat
# released, revoke() -> seat released, for a wedged stand-in child, and each stop broken
# down into its steps (kill, exit seen, reap, end-of-file, cgroup empty, confirmed, seat
# released, next turn's seat).
import math
import os

from common import BEFORE_SECTIONS, STOP_TARGET_MS, fmt_ms, log


# Runs per courier-bench invocation when a --baseline-build is interleaved.
STOP_CHUNK = 50
# The counts that add up when two results are merged (the rest are the same in both).
ADDED = ("deadline_invalid_runs", "revoke_invalid_runs", "exit_code")


def merge_stop(a, b):
    """Two courier-bench stop results as one: samples joined and their
    percentiles taken again, counts added."""
    if isinstance(a, dict) and "samples_ns" in a:
        return summary_of(a["samples_ns"] + b["samples_ns"])
    if isinstance(a, dict):
        return {k: (a[k] + b.get(k, 0) if k in ADDED else merge_stop(a[k], b[k]) if k in b else a[k]) for k in a}
    if isinstance(a, list) and a and isinstance(a[0], dict) and "step" in a[0]:
        steps = {st["step"]: st for st in b}
        return [dict(merge_stop(st, steps[st["step"]]), step=st["step"]) if st["step"] in steps else st for st in a]
    if isinstance(a, list):
        return (a + b)[:5]
    return a


def summary_of(samples):
    """Nearest-rank percentiles, as courier-bench computes them."""
    s = sorted(samples)

    def pct(p):
        if not s:
            return 0.0
        rank = min(max(math.ceil(p / 100 * len(s) - 1e-9), 1), len(s))
        return s[rank - 1] / 1e6
    return {"n": len(s), "p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": pct(100),
            "samples_ns": samples}


class Stop:
    def stop_once(self, build, runs):
        saved, self.build = self.build, build
        try:
            return self.courier_bench("stop", "--standin", self.bin("courier-standin"),
                                      "--lane-dir", os.path.join(self.tmp, "lanes-stop"), "--runs", str(runs))
        finally:
            self.build = saved

    def stop_interleaved(self, runs):
        """This build's and --baseline-build's courier-bench stop, in chunks
        of STOP_CHUNK runs taken in turn, so that both see the same load.
        The baseline's merged result waits in self.stop_before for the
        "before" pass (run_before), which then runs nothing."""
        before_build = os.path.abspath(self.args.baseline_build)
        now = before = None
        done = 0
        while done < runs:
            n = min(STOP_CHUNK, runs - done)
            order = (self.build, before_build) if (done // STOP_CHUNK) % 2 == 0 else (before_build, self.build)
            for build in order:
                d = self.stop_once(build, n)
                if build == self.build:
                    now = d if now is None else merge_stop(now, d)
                else:
                    before = d if before is None else merge_stop(before, d)
            done += n
        for d in (now, before):
            d["exit_code"] = 1 if d["exit_code"] else 0
            d["interleaved_with_baseline_build"] = True
            d["runs"] = runs
        self.stop_before = before
        return now

    def bench_stop(self):
        runs = self.args.stop_runs
        interleave = self.args.baseline_build and "stop" in BEFORE_SECTIONS
        if getattr(self, "stop_before", None) is not None and self.build == os.path.abspath(
                self.args.baseline_build or ""):
            log("stop: the baseline build's runs were taken interleaved with this build's")
            d, self.stop_before = self.stop_before, None
        elif interleave:
            log(f"stop: {runs} runs of each measurement, interleaved with --baseline-build in chunks of "
                f"{STOP_CHUNK} (courier-bench stop)")
            d = self.stop_interleaved(runs)
        else:
            log(f"stop: {runs} runs of each measurement (courier-bench stop)")
            d = self.stop_once(self.build, runs)
        self.results["stop"] = d

        def dist(s):
            return f"p50 {fmt_ms(s['p50_ms'])}  p99 {fmt_ms(s['p99_ms'])}  max {fmt_ms(s['max_ms'])}  (n={s['n']})"

        def target(s):
            return "target p99 <= 5 ms: " + ("met" if s["n"] > 0 and s["p99_ms"] <= STOP_TARGET_MS else "missed")
        age = d["cgroup_aged"]["revoke_child_age_ms"]
        tags = {"cgroup": "cgroup", "pgroup": "pgroup", "cgroup_aged": f"cgroup, child {age} ms old"}
        self.notes.append(f"stop: [cgroup] is the default kill domain (a cgroup of its own per child), [pgroup] "
                          f"CgroupMode::off (process group only); [cgroup, child {age} ms old] revokes a child "
                          f"that has run {age} ms. The seat is handed on at 'next turn's seat'. "
                          f"{runs} runs each, interleaved in one process.")
        self.row("stop", f"one scan of /proc ({d['proc_processes']} processes), as the census does",
                 f"p50 {fmt_ms(d['proc_scan']['p50_ms'])}  p99 {fmt_ms(d['proc_scan']['p99_ms'])}")
        for key in ("cgroup", "pgroup", "cgroup_aged"):
            s = d[key]
            where = tags[key]
            expected = "process group" if key == "pgroup" else "cgroup"
            if s["kill_domain"] != expected:
                where += f"; actually {s['kill_domain']}"
            where = f"[{where}]"
            if "deadline_to_kill" in s:
                self.row("stop", f"(a) deadline -> SIGKILL issued {where}", dist(s["deadline_to_kill"]))
                self.row("stop", f"(b) deadline -> stop confirmed {where}", dist(s["deadline_to_confirmed"]),
                         target(s["deadline_to_confirmed"]))
                self.row("stop", f"(b) deadline -> next turn's seat {where}",
                         dist(s["deadline_to_next_seat"]), target(s["deadline_to_next_seat"]))
            self.row("stop", f"(c) revoke() -> stop confirmed {where}", dist(s["revoke_to_confirmed"]),
                     target(s["revoke_to_confirmed"]))
            if "revoke_kill_to_confirmed" in s:
                self.row("stop", f"(c) revocation's kill -> stop confirmed {where}",
                         dist(s["revoke_kill_to_confirmed"]), target(s["revoke_kill_to_confirmed"]))
            self.row("stop", f"(c) revoke() -> next turn's seat {where}",
                     dist(s["revoke_to_next_seat"]), target(s["revoke_to_next_seat"]))
            self.row("stop", f"    kill -> exit seen | reaped -> confirmed {where}",
                     f"p50 {fmt_ms(s['kill_to_exited']['p50_ms'])} | {fmt_ms(s['reaped_to_confirmed']['p50_ms'])}  "
                     f"p99 {fmt_ms(s['kill_to_exited']['p99_ms'])} | {fmt_ms(s['reaped_to_confirmed']['p99_ms'])}")
            self.stop_breakdown(s, where)
            bad = s["deadline_invalid_runs"] + s["revoke_invalid_runs"]
            if bad:
                self.notes.append(f"stop: {bad} {key} runs did not end as expected and are not counted: "
                                  f"{s['invalid_examples']}")
        self.check_exit("stop", d)

    def stop_breakdown(self, s, where):
        """Each stop's steps (StopSteps in courier-bench): p50/p90/p99/max of
        each, from the instants the product stamped where it observed them."""
        for kind, origin in (("deadline", "deadline"), ("revoke", "revoke()")):
            for st in s.get(f"{kind}_steps", []):
                if st["n"] == 0:
                    continue
                self.row("stop", f"    {kind} step: {st['step'].replace('origin', origin)} {where}",
                         f"p50 {fmt_ms(st['p50_ms'])}  p90 {fmt_ms(st['p90_ms'])}  p99 {fmt_ms(st['p99_ms'])}  "
                         f"max {fmt_ms(st['max_ms'])}  (n={st['n']})")
