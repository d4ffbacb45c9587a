# inproc.py — the inproc section (courier-bench inproc): an in-process libgit2 push against
# the Executor with a warm child and with a cold child.
import os

from common import fmt_ms, log, pct


class InProcess:
    def bench_inproc(self):
        n = self.args.n
        log(f"inproc: {n} pushes each: in-process libgit2, executor with a warm child, executor cold")
        src, info = self.gen_repo("inproc-src", "--commits", str(3 * n + 1))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remote = self.create_repo("inproc")
        url = f"{self.url_base}/inproc.git"
        self.git_push(src, url, commits[0])
        # libgit2 here verifies the host name against the certificate's DNS
        # names only (its TLS backend ignores the IP address entry), so this
        # benchmark names the server `localhost`, which the certificate also
        # lists; every series uses the same URL.
        url = url.replace("https://127.0.0.1:", "https://localhost:", 1)
        listing = os.path.join(self.tmp, "inproc-commits.txt")
        with open(listing, "w") as f:
            f.write("\n".join(commits[1:]) + "\n")
        d = self.courier_bench("inproc", "--child", self.bin("git-courier"),
                               "--lane-dir", os.path.join(self.tmp, "lanes-inproc"), "--repo", src,
                               "--commits", listing, "--ca-file", self.ca, "--remote", url)
        if self.rev_parse(remote, "refs/heads/main") != d.get("last"):
            raise RuntimeError(f"inproc: the remote's main is not the last commit pushed ({d.get('last')})")
        summary = {}
        for name in ("inproc", "warm", "cold"):
            ms = [v / 1e6 for v in d.get(name, [])]
            if not ms:
                raise RuntimeError(f"inproc: no {name} sample; failures: {d.get('failures')}")
            summary[name] = {"median_ms": pct(ms, 50), "p90_ms": pct(ms, 90), "samples_ms": ms}
        self.results["inproc"] = {"n": n, "series": summary, "failures": d["failures"],
                                  "warm_not_warm": d["warm_not_warm"]}
        labels = {"inproc": "in-process libgit2 push (git_remote_push)", "warm": "Executor, warm child",
                  "cold": "Executor, cold child"}
        for name in ("inproc", "warm", "cold"):
            self.row("inproc", f"{labels[name]}, 1 commit (n={len(summary[name]['samples_ms'])})",
                     f"median {fmt_ms(summary[name]['median_ms'])}  p90 {fmt_ms(summary[name]['p90_ms'])}")
        base = summary["inproc"]["median_ms"]
        for name in ("warm", "cold"):
            ratio = summary[name]["median_ms"] / base
            summary[name]["ratio_to_inproc_median"] = ratio
            self.row("inproc", f"ratio {labels[name]} / in-process (median)", f"{ratio:.2f}",
                     "target <= 1.05: " + ("met" if ratio <= 1.05 else "missed") if name == "warm" else "")
        # The executor's own share of each delivery: wall time minus the
        # child's advertise + pack + upload (whole milliseconds, as the child
        # reports them).
        for name in ("warm", "cold"):
            walls = summary[name]["samples_ms"]
            legs = d.get(f"{name}_legs_ms", [])
            over = [w - l for w, l in zip(walls, legs)]
            frac = [o / w for o, w in zip(over, walls)]
            summary[name]["executor_share_ms"] = over
            self.row("inproc", f"{labels[name]}: wall minus the child's legs",
                     f"median {fmt_ms(pct(over, 50))} ({100 * pct(frac, 50):.1f}% of wall)  "
                     f"p90 {fmt_ms(pct(over, 90))}")
            acc = [v / 1e6 for v in d.get(f"{name}_submit_to_job_accepted", [])]
            fin = [v / 1e6 for v in d.get(f"{name}_exit_to_confirmed", [])]
            rest = [o - a - f for o, a, f in zip(over, acc, fin)]
            summary[name].update({"submit_to_job_accepted_ms": acc, "exit_to_confirmed_ms": fin})
            self.row("inproc", f"    of which submit -> job accepted | exit -> confirmed | in the child",
                     f"median {fmt_ms(pct(acc, 50))} | {fmt_ms(pct(fin, 50))} | {fmt_ms(pct(rest, 50))}")
        self.check_exit("inproc", d)
