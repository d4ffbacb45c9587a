# fleet.py — the fleet section: two `git-courier serve` hosts on one remote set, with a
# PostgreSQL state and with the single-host backend: throughput and lane handover.
import json
import os
import pwd
import socket
import subprocess
import threading
import time

from common import UnixHTTPConnection, end_group, fmt_ms, pct, service_call, service_outcome


class Fleet:
    def start_postgres(self):
        """A throwaway PostgreSQL cluster in this run's directory, as the
        user postgres (initdb refuses root). Returns (url, stop function)."""
        bindir = "/usr/lib/postgresql/15/bin"
        if not os.access(os.path.join(bindir, "initdb"), os.X_OK):
            raise RuntimeError("fleet: PostgreSQL 15 is not installed (scripts/bootstrap installs it)")
        data = os.path.join(self.tmp, "pg")
        os.makedirs(data)
        pw = pwd.getpwnam("postgres")
        os.chown(self.tmp, os.getuid(), os.getgid())
        os.chmod(self.tmp, 0o755)
        os.chown(data, pw.pw_uid, pw.pw_gid)
        as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.run(as_pg + [os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"],
                 env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        self.run(as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(data, "log"),
                          "-o", f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start"],
                 env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})

        def stop():
            self.run(as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                     check=False, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        try:
            self.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres", "-At", "-c",
                      "CREATE DATABASE courier"], env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        except RuntimeError:
            stop()
            raise
        return f"postgres://postgres@127.0.0.1:{port}/courier", stop

    def start_host(self, name, state_args, lane_dir):
        """One `git-courier serve` "host" of the fleet: its socket, lanes and
        host id. Waited for by a fact: GET /healthz answers with its warm
        children ready."""
        state = os.path.join(self.tmp, "fleet-" + name)
        os.makedirs(state, exist_ok=True)
        os.makedirs(lane_dir, exist_ok=True)
        sock = os.path.join(state, "serve.sock")
        cmd = [self.bin("git-courier"), "serve", "--socket", sock, "--repo-root", self.tmp, *state_args,
               "--host-id", "bench-" + name, "--lane-dir", lane_dir, "--ca-file", self.ca,
               "--workers", "4", "--warm", "2"]
        log_file = open(os.path.join(state, "serve.log"), "w")
        proc = subprocess.Popen(cmd, env=self.env(), stdout=log_file, stderr=log_file, start_new_session=True)
        log_file.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                with open(os.path.join(state, "serve.log")) as f:
                    raise RuntimeError(f"fleet host {name} exited {proc.returncode}: {f.read()[-2000:]}")
            try:
                status, body = service_call(sock, "GET", "/healthz")
                if status == 200 and body.get("warm_ready", 0) >= 1:
                    return proc, sock
            except OSError:
                pass
            time.sleep(0.05)
        end_group(proc)
        raise RuntimeError(f"fleet host {name} did not answer /healthz within 30 s")

    @staticmethod
    def stream_until(sock, delivery, event, stamps, key):
        """Reads a delivery's events as they arrive, up to the named one:
        stamps[key + "_" + EVENT] = the monotonic instant each event first
        arrived (the stream is then left)."""
        conn = UnixHTTPConnection(sock)
        try:
            conn.request("GET", f"/v1/deliveries/{delivery}/events")
            r = conn.getresponse()
            while True:
                line = r.readline()
                if not line:
                    return
                e = json.loads(line)
                stamps.setdefault(key + "_" + e.get("event", ""), time.monotonic_ns())
                if e.get("event") == event:
                    return
        finally:
            conn.close()

    def fleet_backend(self, label, state_a, state_b, lanes_a, lanes_b, src, remotes, chains):
        hosts = [self.start_host(label + "-a", state_a, lanes_a), self.start_host(label + "-b", state_b, lanes_b)]
        try:
            socks = [h[1] for h in hosts]
            # Throughput: every delivery submitted at once, half to each host.
            n = self.args.fleet_n
            ids = []
            t0 = time.monotonic_ns()
            for k in range(n):
                i = k % len(remotes)
                oid = next(chains[i])
                status, body = service_call(socks[k % 2], "POST", "/v1/deliveries",
                                            {"repo": src, "remote": remotes[i][1], "ref": f"refs/heads/t-{label}-{k}",
                                             "oid": oid, "deadline": "300s"})
                if status != 202:
                    raise RuntimeError(f"fleet {label}: POST answered {status}: {body}")
                ids.append((socks[k % 2], body["id"]))
            bad = []
            for sock, d in ids:
                o = service_outcome(sock, d)
                if o.get("outcome") != "delivered":
                    bad.append(f"{o.get('outcome')}: {o.get('reason')}")
            wall = (time.monotonic_ns() - t0) / 1e6
            if bad:
                raise RuntimeError(f"fleet {label}: {len(bad)} not delivered: {bad[0]}")
            # Handovers on one remote: host a holds the lane, host b waits.
            url = remotes[0][1]
            handovers = []
            for h in range(self.args.fleet_handovers):
                oid = next(chains[0])
                st, first = service_call(socks[0], "POST", "/v1/deliveries",
                                         {"repo": src, "remote": url, "ref": f"refs/heads/h-{label}-{h}-a",
                                          "oid": oid, "deadline": "120s"})
                stamps = {}
                # Host b submits once host a holds the lane.
                self.stream_until(socks[0], first["id"], "seat_granted", stamps, "a")
                st2, second = service_call(socks[1], "POST", "/v1/deliveries",
                                           {"repo": src, "remote": url, "ref": f"refs/heads/h-{label}-{h}-b",
                                            "oid": oid, "deadline": "120s"})
                if st != 202 or st2 != 202:
                    raise RuntimeError(f"fleet {label}: handover POSTs answered {st}, {st2}")
                readers = [threading.Thread(target=self.stream_until,
                                            args=(socks[0], first["id"], "finished", stamps, "a")),
                           threading.Thread(target=self.stream_until,
                                            args=(socks[1], second["id"], "seat_granted", stamps, "b"))]
                for t in readers:
                    t.start()
                for t in readers:
                    t.join()
                service_outcome(socks[1], second["id"])
                # A handover only when b waited (pending) for a's lane.
                if all(k in stamps for k in ("a_finished", "b_pending", "b_seat_granted")):
                    handovers.append((stamps["b_seat_granted"] - stamps["a_finished"]) / 1e6)
        finally:
            for proc, _ in hosts:
                end_group(proc)
        return {"deliveries": n, "wall_ms": wall, "deliveries_per_s": n / (wall / 1000.0),
                "handovers": len(handovers), "handover_p50_ms": pct(handovers, 50),
                "handover_p99_ms": pct(handovers, 99), "handover_samples": handovers}

    def bench_fleet(self):
        remotes_n = 8
        per_remote = self.args.fleet_n // remotes_n + self.args.fleet_handovers + 4
        src, info = self.gen_repo("fleet-src", "--commits", str(2 * per_remote + 4))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        results = {}
        url, stop_pg = self.start_postgres()
        try:
            for label in ("postgres", "flock"):
                remotes = []
                for i in range(remotes_n):
                    path = self.create_repo(f"fleet-{label}-{i}")
                    remotes.append((path, f"{self.url_base}/fleet-{label}-{i}.git"))
                chains = [iter(commits) for _ in range(remotes_n)]
                if label == "postgres":
                    state = ["--state", url]
                    lanes_a, lanes_b = os.path.join(self.tmp, "fleet-lanes-a"), os.path.join(self.tmp, "fleet-lanes-b")
                    results[label] = self.fleet_backend(label, state, state, lanes_a, lanes_b, src, remotes, chains)
                else:
                    journal = ["--journal", os.path.join(self.tmp, "fleet-flock", "journal.sqlite")]
                    lanes = os.path.join(self.tmp, "fleet-flock", "lanes")
                    results[label] = self.fleet_backend(label, journal, journal, lanes, lanes, src, remotes, chains)
        finally:
            stop_pg()
        res = dict(results)
        res["ratio_throughput"] = res["postgres"]["deliveries_per_s"] / res["flock"]["deliveries_per_s"]
        self.results["fleet"] = res
        for label, text in (("postgres", "PostgreSQL leases + journal"), ("flock", "single-host flock + SQLite")):
            m = res[label]
            self.row("fleet", f"{text}: {m['deliveries']} deliveries, two hosts, 8 remotes",
                     f"{m['deliveries_per_s']:.1f}/s  handover p50 {fmt_ms(m['handover_p50_ms'])}  "
                     f"p99 {fmt_ms(m['handover_p99_ms'])} ({m['handovers']} handovers)")
        self.row("fleet", "ratio PostgreSQL / flock", f"throughput {res['ratio_throughput']:.2f}x")
