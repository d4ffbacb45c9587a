# service.py — the service section: deliveries through `git-courier serve` against the
# CLI run once per delivery, the same remotes, in the same run, alternating.
import os
import subprocess
import threading
import time

from common import end_group, fmt_mib, fmt_ms, log, pct, service_call, service_outcome


class ServiceAgainstCli:
    def start_service(self, sock, state):
        """`git-courier serve` on a socket in this run's directory, waited
        for by a fact: GET /healthz answers. Returns the Popen."""
        os.makedirs(state, exist_ok=True)
        workers = self.args.service_clients
        cmd = [self.bin("git-courier"), "serve", "--socket", sock, "--repo-root", self.tmp,
               "--journal", os.path.join(state, "journal.sqlite"), "--lane-dir", os.path.join(state, "lanes"),
               "--ca-file", self.ca, "--workers", str(workers), "--warm", str(workers)]
        log_file = open(os.path.join(state, "serve.log"), "w")
        proc = subprocess.Popen(cmd, env=self.env(), stdout=log_file, stderr=log_file, start_new_session=True)
        log_file.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                with open(os.path.join(state, "serve.log")) as f:
                    raise RuntimeError(f"git-courier serve exited {proc.returncode}: {f.read()[-2000:]}")
            try:
                status, body = service_call(sock, "GET", "/healthz")
                if status == 200 and body.get("warm_ready", 0) >= min(workers, 1):
                    return proc
            except OSError:
                pass
            time.sleep(0.05)
        end_group(proc)
        raise RuntimeError("git-courier serve did not answer /healthz within 30 s")

    def service_delivery(self, sock, src, url, oid):
        """One delivery through the service: submit -> finished, in ms."""
        t0 = time.monotonic_ns()
        status, body = service_call(sock, "POST", "/v1/deliveries",
                                    {"repo": src, "remote": url, "ref": "refs/heads/main", "oid": oid,
                                     "deadline": "60s"})
        if status != 202:
            raise RuntimeError(f"service: POST answered {status}: {body}")
        outcome = service_outcome(sock, body["id"])
        t1 = time.monotonic_ns()
        if outcome.get("outcome") != "delivered":
            raise RuntimeError(f"service: {outcome.get('outcome')}: {outcome.get('reason')}")
        return (t1 - t0) / 1e6

    def service_phase(self, mode, sock, src, remotes, chains, per_client):
        """Each client delivers per_client new commits, one at a time, to
        its own remote, all clients at once. Returns (wall ms, latencies)."""
        lat, errors = [], []
        lock = threading.Lock()
        lanes = os.path.join(self.tmp, "lanes-service-cli")

        def client(i):
            url, chain = remotes[i][1], chains[i]
            try:
                for _ in range(per_client):
                    oid = next(chain)
                    if mode == "cli":
                        ms, _ = self.courier_push(src, url, oid, lanes, deadline="60s")
                    else:
                        ms = self.service_delivery(sock, src, url, oid)
                    if self.rev_parse(remotes[i][0], "refs/heads/main") != oid:
                        raise RuntimeError(f"{url}: main is not {oid} after a {mode} delivery")
                    with lock:
                        lat.append(ms)
            except Exception as e:  # reported after the join
                with lock:
                    errors.append(f"{mode}: {e}")
        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(remotes))]
        t0 = time.monotonic_ns()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = (time.monotonic_ns() - t0) / 1e6
        if errors:
            raise RuntimeError("; ".join(errors[:3]))
        return wall, lat

    def bench_service(self):
        clients = self.args.service_clients
        n = self.args.service_n
        rounds = 2
        per_client = max(1, n // (clients * rounds))
        log(f"service: {clients} clients, {per_client} deliveries each per phase, {rounds} rounds of "
            "CLI then service (alternating), one remote per client")
        src, info = self.gen_repo("service-src", "--commits", str(2 * rounds * per_client + 3))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remotes = []
        for i in range(clients):
            path = self.create_repo(f"service-{i:02d}")
            url = f"{self.url_base}/service-{i:02d}.git"
            self.git_push(src, url, commits[0])
            remotes.append((path, url))
        # Every remote walks the same chain of commits: each delivery is one
        # new commit on top of the last, whichever mode delivers it.
        chains = [iter(commits[1:]) for _ in range(clients)]
        sock = os.path.join(self.tmp, "serve", "serve.sock")
        proc = self.start_service(sock, os.path.join(self.tmp, "serve"))
        try:
            for mode in ("service", "cli"):  # one warm-up delivery per client and mode, not counted
                self.service_phase(mode, sock, src, remotes, chains, 1)
            walls = {"cli": [], "service": []}
            lat = {"cli": [], "service": []}
            for r in range(rounds):
                for mode in (("cli", "service") if r % 2 == 0 else ("service", "cli")):
                    wall, samples = self.service_phase(mode, sock, src, remotes, chains, per_client)
                    walls[mode].append(wall)
                    lat[mode].extend(samples)
            rss = self.rss_kb(proc.pid)
        finally:
            end_group(proc)
        res = {"clients": clients, "deliveries_per_mode": clients * per_client * rounds, "rounds": rounds,
               "objects_per_delivery_note": "one new small commit each", "service_rss_kb": rss}
        for mode in ("cli", "service"):
            total = len(lat[mode])
            res[mode] = {"deliveries": total, "wall_ms": sum(walls[mode]),
                         "deliveries_per_s": total / (sum(walls[mode]) / 1000.0),
                         "p50_ms": pct(lat[mode], 50), "p99_ms": pct(lat[mode], 99), "samples": lat[mode]}
        res["ratio_throughput"] = res["service"]["deliveries_per_s"] / res["cli"]["deliveries_per_s"]
        res["ratio_p50"] = res["service"]["p50_ms"] / res["cli"]["p50_ms"]
        res["ratio_p99"] = res["service"]["p99_ms"] / res["cli"]["p99_ms"]
        self.results["service"] = res
        for mode, label in (("cli", "CLI, one process per delivery"), ("service", "service (warm children)")):
            m = res[mode]
            self.row("service", f"{label}: {m['deliveries']} deliveries, {clients} clients",
                     f"{m['deliveries_per_s']:.1f}/s  submit->delivered p50 {fmt_ms(m['p50_ms'])}  "
                     f"p99 {fmt_ms(m['p99_ms'])}")
        self.row("service", "ratio service / CLI",
                 f"throughput {res['ratio_throughput']:.2f}x  p50 {res['ratio_p50']:.2f}x  "
                 f"p99 {res['ratio_p99']:.2f}x")
        if rss:
            self.row("service", "service RSS after the run", fmt_mib(rss))
