# curve.py — the curve section: whole histories of growing size pushed by each engine and
# by git push, drawn with gnuplot.
import os
import shutil
import time

from common import OverBudget, ensure_tool, fmt_mib, log, meminfo


class ScaleCurve:
    def curve_point(self, size, tools, until=None):
        t0 = time.monotonic()
        log(f"curve: generating a repository of >= {size} objects")
        src, info = self.gen_repo(f"curve-src-{size}", "--objects", str(size))
        point = {"target_objects": size, "objects": int(info["objects"]), "commits": int(info["commits"]),
                 "gen_repo_s": info["seconds"], "tools": {}}
        for i, tool in enumerate(tools):
            log(f"curve: {point['objects']} objects: {tool}")
            left = None if until is None else until - time.monotonic()
            if left is not None and left <= 0:
                raise OverBudget(f"the budget ended before {tool}")
            r = self.push_full(tool, src, info["head"], point["objects"], f"curve-{size}-{i}", left)
            point["tools"][tool] = {
                "wall_ms": r["wall_ms"], "bytes_sent": r["bytes_sent"], "received_pack_bytes": r["received_pack_bytes"],
                "parent_peak_kb": r["parent_peak_kb"], "child_peak_kb": r["child_peak_kb"],
                "child_peak_cmd": r["child_peak_cmd"], "tree_max_rss_kb": r["tree_max_rss_kb"],
                "engine_reported": r.get("engine_reported"),
                "timings_ms": r.get("report", {}).get("timings_ms")}
        shutil.rmtree(src, ignore_errors=True)
        point["seconds"] = time.monotonic() - t0
        return point

    def bench_curve(self):
        sizes = self.args.curve_sizes
        tools = [f"courier:{e}:none" for e in self.args.curve_engines] + ["git"]
        budget_s = self.args.curve_minutes * 60
        log(f"curve: {','.join(map(str, sizes))} objects, each with {', '.join(tools)}; budget "
            f"{self.args.curve_minutes:g} min")
        t0 = time.monotonic()
        points = []
        for size in sizes:
            points.append(self.curve_point(size, tools))
        # One million objects only where this machine allows it within the
        # budget: estimated from the largest point measured, scaled by the
        # object count and a little more (packing is n log n at best).
        million = {"decision": "not considered"}
        if self.args.curve_million != "no" and 1_000_000 not in sizes:
            last = points[-1]
            factor = 1_000_000 / last["objects"]
            est_s = last["seconds"] * factor * 1.2
            spent = time.monotonic() - t0
            # Memory: extrapolated linearly through the last two points (a
            # fixed start-up share plus a share per object).
            prev = points[-2] if len(points) > 1 else None
            peak_kb = 0
            for tool, t in last["tools"].items():
                m1 = t["tree_max_rss_kb"] or 0
                m0 = (prev["tools"][tool]["tree_max_rss_kb"] or 0) if prev else 0
                n0 = prev["objects"] if prev else 0
                peak_kb = max(peak_kb, m1 + max(0, m1 - m0) * (1_000_000 - last["objects"]) / (last["objects"] - n0))
            avail_kb = meminfo("MemAvailable")
            free_b = shutil.disk_usage(self.tmp).free
            need_b = max(t["received_pack_bytes"] for t in last["tools"].values()) * factor * 4
            why = []
            if spent + est_s > budget_s:
                why.append(f"estimated {est_s / 60:.1f} min (the {last['objects']}-object point took "
                           f"{last['seconds']:.0f} s, x{factor:.1f} x1.2) would take the curve to "
                           f"{(spent + est_s) / 60:.1f} min, over {self.args.curve_minutes:g}")
            if peak_kb > avail_kb / 2:
                why.append(f"estimated peak memory {peak_kb / 2**20:.1f} GiB is over half of the "
                           f"{avail_kb / 2**20:.1f} GiB available")
            if need_b > free_b:
                why.append(f"estimated {need_b / 2**30:.1f} GiB of packs, {free_b / 2**30:.1f} GiB free in {self.tmp}")
            if why and self.args.curve_million != "yes":
                million = {"decision": "skipped", "why": why, "estimate_s": est_s}
                self.notes.append("curve: 1,000,000 objects skipped: " + "; ".join(why) + ".")
            else:
                million = {"decision": "run", "estimate_s": est_s}
                # An estimate can be wrong: the point gets what is left of
                # the budget, and a push still running then is ended and the
                # point left out, saying so.
                try:
                    points.append(self.curve_point(1_000_000, tools, until=t0 + budget_s))
                except OverBudget as e:
                    million = {"decision": "stopped at the budget", "why": str(e), "estimate_s": est_s}
                    self.notes.append(f"curve: 1,000,000 objects started (estimate {est_s / 60:.1f} min) but stopped "
                                      f"at the {self.args.curve_minutes:g}-minute budget: {e}; the point is left out.")
                    shutil.rmtree(os.path.join(self.tmp, "curve-src-1000000"), ignore_errors=True)
        self.results["curve"] = {"tools": tools, "points": points, "million": million,
                                 "seconds": time.monotonic() - t0}
        for p in points:
            for tool in tools:
                t = p["tools"][tool]
                label = "git push" if tool == "git" else f"git-courier {tool.split(':')[1]}"
                self.row("curve", f"{p['objects']} objects: {label}",
                         f"wall {t['wall_ms'] / 1000:.2f} s  sent {(t['bytes_sent'] or 0) / 2**20:.1f} MiB  peak "
                         f"parent/child/tree {fmt_mib(t['parent_peak_kb'])} / {fmt_mib(t['child_peak_kb'])} / "
                         f"{fmt_mib(t['tree_max_rss_kb'])}")
        self.row("curve", "whole scale curve", f"{(time.monotonic() - t0) / 60:.1f} min",
                 f"budget {self.args.curve_minutes:g} min: " + ("met" if time.monotonic() - t0 <= budget_s
                                                                  else "over"))
        self.plot_curve(points, tools)

    def plot_curve(self, points, tools):
        """Time, peak memory (the whole process tree, exact) and bytes sent
        against object count, log scales, one line per tool, drawn by
        gnuplot into --curve-plot."""
        gnuplot = ensure_tool("gnuplot", "gnuplot-nox")
        if not gnuplot:
            raise RuntimeError("curve: gnuplot is missing and could not be installed (apt-get install gnuplot-nox); "
                               "the figures are in bench.json, the picture was not drawn")
        data = os.path.join(self.tmp, "curve")
        os.makedirs(data, exist_ok=True)
        plots = {"wall time (s)": [], "peak memory of the process tree (MiB)": [], "bytes sent (MiB)": []}
        for i, tool in enumerate(tools):
            path = os.path.join(data, f"tool{i}.dat")
            with open(path, "w") as f:
                for p in points:
                    t = p["tools"][tool]
                    f.write(f"{p['objects']} {t['wall_ms'] / 1000:.4f} {(t['tree_max_rss_kb'] or 0) / 1024:.2f} "
                            f"{max(t['bytes_sent'] or 0, 1) / 2**20:.4f}\n")
            title = "git push" if tool == "git" else f"git-courier --pack-engine {tool.split(':')[1]}"
            if tool != "git" and tool.split(":")[1] == self.default_engine:
                title += " (the default)"
            for col, key in zip((2, 3, 4), plots):
                # A point type of its own per tool: git push and the git
                # engine send the same pack, so their lines can coincide.
                plots[key].append(f"'{path}' using 1:{col} with linespoints lw 2 pt {(7, 5, 9, 13, 11)[i % 5]} "
                                  f"ps 1.2 title '{title}'")
        out = os.path.abspath(self.args.curve_plot or os.path.join(self.build, "scale-curve.svg"))
        term = "pngcairo size 1500,480" if out.endswith(".png") else "svg size 1500,480 dynamic font 'sans,12'"
        when = time.strftime("%Y-%m-%d", time.gmtime())
        script = [f"set terminal {term}", f"set output '{out}'",
                  f"set multiplot layout 1,3 title 'git-courier against git push: a whole history into an empty "
                  f"repository ({when}, {os.cpu_count()} cores)'",
                  "set logscale xy", "set grid", "set key top left Left reverse", "set xlabel 'objects pushed'",
                  "set format x '10^{%L}'"]
        for i, (key, lines) in enumerate(plots.items()):
            # One legend, in the first panel: the lines are the same tools.
            script += [f"set title '{key}'"] + (["unset key"] if i else []) + ["plot " + ", ".join(lines)]
        script += ["unset multiplot"]
        r = self.run([gnuplot], input="\n".join(script) + "\n", check=False)
        if r.returncode != 0:
            raise RuntimeError(f"curve: gnuplot failed: {r.stderr.strip()[-1000:]}")
        self.results["curve"]["plot"] = out
        self.row("curve", "picture", out)
