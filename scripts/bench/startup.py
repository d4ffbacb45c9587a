# startup.py — the startup section: `git-courier --version` against /bin/true in one
# `hyperfine -N` run, and the shared objects the binary loads to print it.
import json
import os
import re
import shutil

from common import ensure_tool, fmt_ms, log


class StartUp:
    def startup_floors(self):
        """Empty programs linked to Debian's shared libcurl, and to libcurl
        and libgit2: how fast a program that loads them at start can start at
        all (the floor without lazy loading). Built with the system C
        compiler; {} when it cannot build them."""
        cc = shutil.which("cc") or shutil.which("gcc")
        out = {}
        if not cc:
            self.notes.append("startup: no C compiler, so no floor programs")
            return out
        for name, libs in (("empty main + libcurl", ["-lcurl"]),
                           ("empty main + libcurl + libgit2", ["-lcurl", "-lgit2"])):
            exe = os.path.join(self.tmp, "floor-" + "-".join(x[2:] for x in libs))
            # --no-as-needed: the libraries are loaded although main calls
            # nothing in them, as in a program that links them.
            r = self.run([cc, "-x", "c", "-", "-o", exe, "-Wl,--no-as-needed", *libs], check=False,
                         input="int main(void) { return 0; }\n")
            if r.returncode == 0:
                out[name] = exe
            else:
                self.notes.append(f"startup: could not build the floor program '{name}': {r.stderr.strip()[-300:]}")
        return out

    def bench_startup(self):
        """`git-courier --version` against /bin/true in one hyperfine -N run
        (with the floor programs), and the shared objects the binary loads to
        get there."""
        hyperfine = ensure_tool("hyperfine", "hyperfine")
        if not hyperfine:
            raise RuntimeError("startup: hyperfine is missing and could not be installed (apt-get install hyperfine)")
        runs = self.args.startup_runs
        out = os.path.join(self.tmp, "hyperfine.json")
        courier = self.bin("git-courier")
        floors = self.startup_floors()
        log(f"startup: hyperfine -N, {runs} runs each of git-courier --version, /bin/true and {len(floors)} floors")
        self.run([hyperfine, "-N", "--style", "none", "--warmup", "20", "--runs", str(runs), "--export-json", out,
                  f"{courier} --version", "/bin/true", *floors.values()])
        with open(out) as f:
            res = json.load(f)["results"]
        c, t = res[0], res[1]

        def ms(r):
            return {k: r[k] * 1000 for k in ("mean", "median", "stddev", "min", "max")}
        loaded = self.run([courier, "--version"], env=dict(self.env(), LD_DEBUG="files"))
        libs = sorted(set(re.findall(r"file=(\S+) \[0\];\s+generating link map", loaded.stderr)))
        ldd = self.run(["ldd", courier])
        needed = [ln for ln in ldd.stdout.splitlines() if "=>" in ln or ln.strip().startswith("/")]
        d = {"runs": runs, "git_courier_version": ms(c), "bin_true": ms(t),
             "ratio_mean": c["mean"] / t["mean"], "ratio_median": c["median"] / t["median"],
             "floors": {name: dict(ms(r), ratio_mean=r["mean"] / t["mean"])
                        for name, r in zip(floors, res[2:])},
             "shared_objects_loaded": len(libs), "shared_objects": libs, "ldd_entries": len(needed)}
        self.results["startup"] = d
        self.row("startup", f"git-courier --version (hyperfine -N, n={runs})",
                 f"mean {fmt_ms(d['git_courier_version']['mean'])}  median "
                 f"{fmt_ms(d['git_courier_version']['median'])}")
        self.row("startup", f"/bin/true (same run, n={runs})",
                 f"mean {fmt_ms(d['bin_true']['mean'])}  median {fmt_ms(d['bin_true']['median'])}")
        self.row("startup", "ratio git-courier --version / /bin/true",
                 f"mean {d['ratio_mean']:.2f}x  median {d['ratio_median']:.2f}x")
        for name, f in d["floors"].items():
            self.row("startup", f"floor: {name} (same run)",
                     f"mean {fmt_ms(f['mean'])}  {f['ratio_mean']:.2f}x /bin/true")
        self.row("startup", "shared objects loaded by --version (LD_DEBUG=files) | ldd entries",
                 f"{len(libs)} | {len(needed)}")
