# spawn.py — the spawn section (courier-bench spawn): cold spawn -> hello of the real
# binary, and submit -> the child's first answer to its job, cold against warm.
import os

from common import fmt_ms, log


class Spawn:
    def bench_spawn(self):
        runs = self.args.spawn_runs
        log(f"spawn: {runs} deliveries each to a cold child, a warm child and the stand-in, interleaved")
        d = self.courier_bench("spawn", "--child", self.bin("git-courier"), "--standin", self.bin("courier-standin"),
                               "--lane-dir", os.path.join(self.tmp, "lanes-spawn"), "--runs", str(runs))
        self.results["spawn"] = d

        def dist(s):
            return f"p50 {fmt_ms(s['p50_ms'])}  p90 {fmt_ms(s['p90_ms'])}  p99 {fmt_ms(s['p99_ms'])}  (n={s['n']})"

        def pair(c, w):
            return (f"p50 {fmt_ms(c['p50_ms'])} | {fmt_ms(w['p50_ms'])}  p99 {fmt_ms(c['p99_ms'])} | "
                    f"{fmt_ms(w['p99_ms'])}  (n={c['n']}|{w['n']})")
        cold, warm = d["child"], d["warm"]
        self.row("spawn", "git-courier child, cold: spawned -> hello", dist(cold["spawn_to_hello"]))
        self.row("spawn", "git-courier child, cold: submit -> hello", dist(cold["submit_to_hello"]))
        ratio = cold["submit_to_job_accepted"]["p50_ms"] / warm["submit_to_job_accepted"]["p50_ms"] \
            if warm["submit_to_job_accepted"]["n"] else float("nan")
        self.row("spawn", "submit -> child answers its job: cold | warm", pair(cold["submit_to_job_accepted"],
                                                                             warm["submit_to_job_accepted"]),
                 f"warm saves {cold['submit_to_job_accepted']['p50_ms'] - warm['submit_to_job_accepted']['p50_ms']:.1f}"
                 f" ms at p50 ({ratio:.1f}x)")
        self.row("spawn", "submit -> stop confirmed: cold | warm", pair(cold["submit_to_confirmed"],
                                                                     warm["submit_to_confirmed"]))
        self.row("spawn", "stand-in (reference): spawned -> hello", dist(d["standin"]["spawn_to_hello"]))
        if cold["missing_hello"]:
            self.notes.append(f"spawn: {cold['missing_hello']} runs of the cold child had no hello")
        if warm["warm_mismatch"] or d["warm_not_ready"]:
            self.notes.append(f"spawn: {warm['warm_mismatch']} warm-executor deliveries did not get a warm child; "
                              f"{d['warm_not_ready']} times no warm child was ready within 10 s")
        self.check_exit("spawn", d)
