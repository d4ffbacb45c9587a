# journal.py — the journal section: what the SQLite journal adds to a small push, at the
# median (git-courier push with the journal against --no-journal, interleaved).
import os

from common import fmt_ms, log, pct


class JournalCost:
    def bench_journal(self):
        n = self.args.n
        log(f"journal: {n} pushes each of git-courier with and without the journal, interleaved")
        src, info = self.gen_repo("journal-src", "--commits", str(2 * n + 4))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remote = self.create_repo("journal")
        url = f"{self.url_base}/journal.git"
        lanes = os.path.join(self.tmp, "lanes-journal")
        self.git_push(src, url, commits[0])
        nxt = iter(commits[1:])
        self.courier_push(src, url, next(nxt), lanes)                 # warm-up, not counted
        self.courier_push(src, url, next(nxt), lanes, journal=False)  # warm-up, not counted
        with_ms, without_ms = [], []
        for i in range(n):
            for journalled in ((True, False) if i % 2 == 0 else (False, True)):
                oid = next(nxt)
                ms, _ = self.courier_push(src, url, oid, lanes, journal=journalled)
                (with_ms if journalled else without_ms).append(ms)
                if self.rev_parse(remote, "refs/heads/main") != oid:
                    raise RuntimeError(f"journal: the remote's main is not {oid}")
        delta = pct(with_ms, 50) - pct(without_ms, 50)
        self.results["journal"] = {
            "n": n,
            "with_journal_ms": {"median": pct(with_ms, 50), "p90": pct(with_ms, 90), "samples": with_ms},
            "without_journal_ms": {"median": pct(without_ms, 50), "p90": pct(without_ms, 90), "samples": without_ms},
            "added_median_ms": delta,
        }
        self.row("journal", f"git-courier push with the journal (n={n})",
                 f"median {fmt_ms(pct(with_ms, 50))}  p90 {fmt_ms(pct(with_ms, 90))}")
        self.row("journal", f"git-courier push --no-journal (n={n})",
                 f"median {fmt_ms(pct(without_ms, 50))}  p90 {fmt_ms(pct(without_ms, 90))}")
        self.row("journal", "added by the journal (difference of medians)", f"{delta:+.1f} ms",
                 "target <= 2 ms: " + ("met" if delta <= 2.0 else "missed"))
