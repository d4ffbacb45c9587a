# run.py — the whole run: every section of scripts/bench in order, the table, bench.json.
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from harness import Harness
from small import SmallPush
from journal import JournalCost
from large import LargePush
from curve import ScaleCurve
from startup import StartUp
from stop import Stop
from spawn import Spawn
from inproc import InProcess
from lanes import Lanes
from service import ServiceAgainstCli
from fleet import Fleet
from ssh_push import SshPush
from cost import ClientCost
from costperf import CostPerf
from scale import ServiceScale
from goals import Goals
from common import BEFORE_SECTIONS, ROOT, SECTIONS, fmt_load, log, pack_engines


# Every section is a mixin of its own module; Harness holds what they share.
class Bench(Harness, SmallPush, JournalCost, LargePush, ScaleCurve, StartUp, Stop, Spawn, InProcess, Lanes,
            ServiceAgainstCli, Fleet, SshPush, ClientCost, CostPerf, ServiceScale, Goals):
    def main(self):
        if not self.args.no_build:
            self.build_all()
        for name in ("git-courier", "courier-standin", "courier-bench"):
            if not os.access(self.bin(name), os.X_OK):
                sys.exit(f"bench: {self.bin(name)} is missing (build it, or drop --no-build)")
        self.choose_engines()
        base, base_machine = {}, {}
        if self.args.baseline:
            with open(self.args.baseline) as f:
                doc = json.load(f)
            base, base_machine = doc.get("results", {}), doc.get("machine", {})
        self.tmp = tempfile.mkdtemp(prefix="courier-bench-", dir="/tmp")
        os.makedirs(os.path.join(self.tmp, "home"))
        self.ca = ""
        failures = []
        machine = self.machine()
        started = time.time()
        load_start = os.getloadavg()
        try:
            need_server = any(s in self.args.only
                              for s in ("small", "journal", "inproc", "large", "lanes", "service", "fleet",
                                        "cost", "costperf", "curve"))
            if need_server:
                self.start_server()
            for section in SECTIONS:
                if section not in self.args.only:
                    continue
                try:
                    getattr(self, f"bench_{section}")()
                except RuntimeError as e:
                    failures.append(f"{section}: {e}")
                    self.row(section, "FAILED", str(e)[:200])
            if self.args.baseline_build:
                same_run = self.run_before(failures)
                base = dict(base, **same_run)
        finally:
            self.stop_server()
            if self.args.keep:
                log(f"kept {self.tmp}")
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)

        machine["loadavg_start"] = load_start
        machine["loadavg_end"] = os.getloadavg()
        # Latencies grow with the machine's load: a baseline taken under
        # another load is no fair "before" for halved / within-p99 goals.
        b_load = base_machine.get("loadavg_start")
        if b_load and not self.args.baseline_build and \
                abs(b_load[0] - load_start[0]) > max(1.0, 0.5 * min(b_load[0], load_start[0])):
            self.notes.append(f"the baseline ran at load average {b_load[0]:.2f} (1 min, at its start), this run at "
                              f"{load_start[0]:.2f}: its latencies are no fair 'before' for these; take both runs "
                              f"back to back (scripts/bench/results/README.md)")
        goals = self.goals(base)
        table = self.table(machine, goals)
        print(table)
        doc = {"machine": machine, "started_unix": started,
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
               "source": self.source(), "options": vars(self.args), "baseline": self.args.baseline,
               "results": self.results, "results_before": getattr(self, "results_before", None), "goals": goals,
               "notes": self.notes, "failures": failures,
               "table": [dict(zip(("section", "measure", "value", "verdict"), r)) for r in self.rows]}
        out = self.args.out or os.path.join(self.build, "bench.json")
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"wrote {out}")
        return 1 if failures else 0

    def run_before(self, failures):
        """The latency sections (startup, stop, spawn, lanes) once more with
        the binaries of --baseline-build, right after this build's, in the
        same run and under the same load: the "before" of the goals that
        compare with one. Their rows are marked "before:"."""
        sections = [s for s in BEFORE_SECTIONS if s in self.args.only]
        build, results, first_row = self.build, self.results, len(self.rows)
        self.build, self.results = os.path.abspath(self.args.baseline_build), {}
        log(f"before: {','.join(sections)} with the binaries in {self.build}")
        try:
            for section in sections:
                try:
                    getattr(self, f"bench_{section}")()
                except RuntimeError as e:
                    failures.append(f"before {section}: {e}")
                    self.row(section, "FAILED", str(e)[:200])
            return self.results
        finally:
            self.rows[first_row:] = [(s, "before: " + m, v, "") for s, m, v, _ in self.rows[first_row:]]
            self.results_before = self.results
            self.build, self.results = build, results

    def choose_engines(self):
        """The pack engines measured: those asked for (--engines,
        --large-engines, --curve-engines; by default every engine) that this
        binary's push --help lists. One not listed is left out with a note,
        so the same command runs against builds with and without an engine."""
        accepted, self.default_engine = pack_engines(self.bin("git-courier"))
        for attr in ("engines", "large_engines", "curve_engines"):
            asked = getattr(self.args, attr) or self.args.engines or accepted
            kept = [e for e in asked if e in accepted]
            dropped = [e for e in asked if e not in accepted]
            if dropped:
                self.notes.append(f"--{attr.replace('_', '-')}: {','.join(dropped)} left out: this git-courier's "
                                  f"--pack-engine takes {'|'.join(accepted)}")
            setattr(self.args, attr, kept)
        log(f"pack engines: {'|'.join(accepted)} (default {self.default_engine}); measured: "
            f"{','.join(self.args.engines)}")

    def source(self):
        r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return r.stdout.strip() or "unknown"

    def table(self, m, goals=()):
        head = (f"machine: {m['nproc']} cores ({m['cpu']}), {m['memory_mib']} MiB, Linux {m['kernel']}; "
                f"{m['git']}; libgit2 {m['libgit2']}\n"
                f"load average (1/5/15 min) at start {fmt_load(m['loadavg_start'])}, at end {fmt_load(m['loadavg_end'])}")
        w1 = max(len(r[1]) for r in self.rows) if self.rows else 10
        w2 = max(len(r[2]) for r in self.rows) if self.rows else 10
        lines = [head, "", f"{'bench':<7} {'measure':<{w1}}  {'value':<{w2}}  verdict",
                 f"{'-' * 7} {'-' * w1}  {'-' * w2}  {'-' * 7}"]
        for s, meas, val, ver in self.rows:
            lines.append(f"{s:<7} {meas:<{w1}}  {val:<{w2}}  {ver}".rstrip())
        if self.notes:
            lines.append("")
            lines.extend(f"note: {n}" for n in self.notes)
        if goals:
            g1 = max(len(g["goal"]) for g in goals)
            g2 = max(len(g["value"]) for g in goals)
            src = ([f"the binaries in {self.args.baseline_build}, this run"] if self.args.baseline_build else []) + \
                ([self.args.baseline] if self.args.baseline else [])
            lines += ["", "goals" + (f" (before: {'; then '.join(src)})" if src else ""),
                      f"{'goal':<{g1}}  {'measured':<{g2}}  verdict", f"{'-' * g1}  {'-' * g2}  {'-' * 7}"]
            lines.extend(f"{g['goal']:<{g1}}  {g['value']:<{g2}}  {g['verdict']}".rstrip() for g in goals)
        return "\n".join(lines)
