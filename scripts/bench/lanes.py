# lanes.py — the lanes section (courier-bench lanes): N concurrent deliveries to N remotes.
import os
import shutil

from common import fmt_mib, fmt_ms, log


class Lanes:
    def bench_lanes(self):
        count = self.args.lanes
        log(f"lanes: {count} concurrent deliveries to {count} remotes")
        # A second pass (the "before" binaries) starts from empty remotes
        # again (courier-bench names them lane-XX): pushing into the first
        # pass's would only be up to date.
        self.lanes_runs = getattr(self, "lanes_runs", 0) + 1
        tag = "" if self.lanes_runs == 1 else f"-{self.lanes_runs}"
        src, info = self.gen_repo(f"lanes-src{tag}", "--commits", "20")
        remotes = []
        for i in range(count):
            old = os.path.join(self.server, "repos", f"lane-{i:02d}.git")
            if self.lanes_runs > 1 and os.path.isdir(old):
                shutil.rmtree(old)
            remotes.append(self.create_repo(f"lane-{i:02d}"))
        d = self.courier_bench("lanes", "--child", self.bin("git-courier"),
                               "--lane-dir", os.path.join(self.tmp, f"lanes-lanes{tag}"), "--repo", src,
                               "--oid", info["head"], "--ca-file", self.ca, "--remote-base", self.url_base,
                               "--count", str(count), "--workers", str(count))
        wrong = [r for r in remotes if self.rev_parse(r, "refs/heads/main") != info["head"]]
        d["remotes_not_updated"] = len(wrong)
        d["objects_per_delivery"] = int(info["objects"])
        self.results["lanes"] = d
        ok = d["exit_code"] == 0 and not wrong
        self.row("lanes", f"{count} remotes at once ({info['objects']} obj each)",
                 f"wall {d['wall_ms']:.0f} ms  throughput {d['throughput_per_s']:.1f}/s  "
                 f"per delivery p50 {fmt_ms(d['per_delivery']['p50_ms'])}",
                 "all delivered" if ok else f"NOT all delivered: {d['outcomes']}")
        self.row("lanes", "parent threads: none/idle/peak",
                 f"{d['threads_before_executor']} / {d['threads_idle_executor']} / {d['threads_peak']}")
        self.row("lanes", f"per live delivery ({d['peak_live_children']} live)",
                 f"parent +{d['parent_rss_per_delivery_kb']:.0f} kB; child RSS {fmt_mib(d['child_rss_per_live_kb'])} "
                 f"(PSS {fmt_mib(d['child_pss_per_live_kb'])}); largest child {fmt_mib(d['child_max_rss_kb'])}")
        self.row("lanes", f"spawned -> hello, {count} at once",
                 f"p50 {fmt_ms(d['spawn_to_hello']['p50_ms'])}  p99 {fmt_ms(d['spawn_to_hello']['p99_ms'])}")
        if wrong:
            raise RuntimeError(f"lanes: {len(wrong)} remotes' main is not {info['head']}")
        self.check_exit("lanes", d)
