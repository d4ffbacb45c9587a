# stop.py — the stop section (courier-bench stop): deadline -> SIGKILL, deadline -> seat
# released, revoke() -> seat released, for a wedged stand-in child, and each stop broken
# down into its steps (kill, exit seen, reap, end-of-file, cgroup empty, confirmed, seat
# released, next turn's seat).
import os

from common import STOP_TARGET_MS, fmt_ms, log


class Stop:
    def bench_stop(self):
        runs = self.args.stop_runs
        log(f"stop: {runs} runs of each measurement (courier-bench stop)")
        d = self.courier_bench("stop", "--standin", self.bin("courier-standin"),
                               "--lane-dir", os.path.join(self.tmp, "lanes-stop"), "--runs", str(runs))
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
