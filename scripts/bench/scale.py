# scale.py — the scale section: one `git-courier serve` holding many queued deliveries
# over many lanes and many open event streams: its memory, submit latency, event
# latency and CPU while nothing moves, drawn with gnuplot.
#
# What is measured, honestly: the deliveries never run. Every lane is held by
# this script the way another process of the same user holds it (an flock on
# the lane's lock file in the service's --lane-dir, as a `git-courier push` to
# that remote would), so every delivery queues behind its lane and the
# service's workers find nothing runnable. The remotes are never contacted
# (they need not exist). What grows is what the service keeps per queued
# delivery and per open stream, and what it does per submission and per event
# with that much queued.
import fcntl
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import time

from common import UnixHTTPConnection, end_group, ensure_tool, fmt_mib, fmt_ms, log, pct, service_call


def lane_lock_name(key):
    """The lane lock's file name for a lane key (src/seat/lane.cpp): the key's
    first 80 characters with every one that is not alphanumeric as '_', then
    '-', the key's 64-bit FNV-1a hash in 16 hex digits, '.lock'. The bench
    checks that the service opened exactly these files (no other lock file
    appears), so a change there fails the section instead of measuring
    deliveries that were never queued."""
    h = 1469598103934665603
    for b in key.encode():
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    readable = "".join(c if c.isascii() and c.isalnum() else "_" for c in key)[:80]
    return f"{readable}-{h:016x}.lock"


def cpu_ns(pid):
    """Time on a CPU of every thread of `pid` (ns, /proc/PID/task/*/schedstat)
    and, per thread name, (ns, times scheduled in, voluntary switches)."""
    total, per = 0, {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns, _, slices = (int(x) for x in f.read().split()[:3])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            vol = 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        vol = int(line.split()[1])
        except OSError:
            continue  # a thread that ended meanwhile
        total += run_ns
        per[f"{name}/{tid}"] = (run_ns, slices, vol)
    return total, per


def ticks(pid):
    """utime + stime of `pid` (all its threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


class Follower:
    """Event streams read by one selector on raw sockets (one descriptor
    each, no thread each): what arrives is kept per stream, so a test for
    an event is a substring of what was read."""

    def __init__(self, sock_path):
        self.path = sock_path
        self.sel = selectors.DefaultSelector()
        self.seen = {}  # delivery id -> bytes read
        self.socks = {}

    def open(self, delivery):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(self.path)
        s.sendall(f"GET /v1/deliveries/{delivery}/events HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        buf = b""
        # Open once its first lines came (the queued and pending events).
        while b'"event":"pending"' not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError(f"scale: the events of {delivery} ended at once: {buf[-300:]!r}")
            buf += chunk
        if not buf.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"scale: events of {delivery}: {buf[:200]!r}")
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, delivery)
        self.seen[delivery] = buf
        self.socks[delivery] = s

    def wait_for(self, delivery, needle, timeout=30):
        """Reads every stream until `needle` is in `delivery`'s: the
        monotonic instant (ns) it was read."""
        until = time.monotonic() + timeout
        while needle not in self.seen[delivery]:
            left = until - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"scale: no {needle!r} on the events of {delivery} within {timeout} s")
            for key, _ in self.sel.select(left):
                try:
                    chunk = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                self.seen[key.data] += chunk
                if not chunk:
                    self.close(key.data)
        return time.monotonic_ns()

    def close(self, delivery):
        s = self.socks.pop(delivery, None)
        if s is not None:
            self.sel.unregister(s)
            s.close()

    def close_all(self):
        for d in list(self.socks):
            self.close(d)
        self.sel.close()


class ServiceScale:
    def start_scale_service(self, state, sock, lanes):
        cmd = [self.bin("git-courier"), "serve", "--socket", sock, "--repo-root", self.tmp,
               "--journal", os.path.join(state, "journal.sqlite"), "--lane-dir", lanes,
               "--workers", str(self.args.scale_workers), "--warm", "0",
               "--max-queued", str(self.args.scale_queued + 1000)]
        log_path = os.path.join(state, "serve.log")
        log_file = open(log_path, "w")
        proc = subprocess.Popen(cmd, env=self.env(), stdout=log_file, stderr=log_file, start_new_session=True)
        log_file.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                with open(log_path) as f:
                    raise RuntimeError(f"scale: git-courier serve exited {proc.returncode}: {f.read()[-2000:]}")
            try:
                status, _ = service_call(sock, "GET", "/healthz")
                if status == 200:
                    return proc, log_path
            except OSError:
                pass
            time.sleep(0.05)
        end_group(proc)
        raise RuntimeError("scale: git-courier serve did not answer /healthz within 30 s")

    @staticmethod
    def fd_limit_logged(log_path):
        """The service's own `fd_limit` log line (it raises its soft
        RLIMIT_NOFILE to the hard limit at start: docs/service.md)."""
        with open(log_path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") == "fd_limit":
                    return e
        return {}

    def hold_lanes(self, lanes, keys):
        """An flock on each lane's lock file, as another process of this user
        holding the lane: the descriptors, kept open until the end."""
        held = []
        for key in keys:
            fd = os.open(os.path.join(lanes, lane_lock_name(key)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"pid={os.getpid()} scripts/bench/bench scale holds this lane".encode())
            held.append(fd)
        return held

    def scale_submit(self, conn, src, oid, url, k):
        body = json.dumps({"repo": src, "remote": url, "ref": f"refs/heads/scale-{k}", "oid": oid,
                           "deadline": "2h"}).encode()
        t0 = time.monotonic_ns()
        conn.request("POST", "/v1/deliveries", body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        raw = r.read()
        ms = (time.monotonic_ns() - t0) / 1e6
        if r.status != 202:
            raise RuntimeError(f"scale: POST {k} answered {r.status}: {raw[:300]!r}")
        return ms, json.loads(raw)["id"]

    def scale_queue(self, proc, conn, src, oid, urls, marks):
        """Submits up to the last mark, round robin over the lanes: RSS at
        each mark, and the submit latency and the service's CPU per submit
        between marks."""
        ids, points, buckets = [], [], []
        rss0 = self.rss_kb(proc.pid)
        points.append({"queued": 0, "rss_kb": rss0})
        lat = []
        cpu0, _ = cpu_ns(proc.pid)
        t_bucket = time.monotonic()
        for k in range(marks[-1]):
            ms, d = self.scale_submit(conn, src, oid, urls[k % len(urls)], k)
            lat.append(ms)
            ids.append(d)
            if k + 1 in marks:
                cpu1, _ = cpu_ns(proc.pid)
                n = len(lat)
                buckets.append({"from": len(ids) - n, "to": len(ids), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                                "max_ms": max(lat), "cpu_ms_per_submit": (cpu1 - cpu0) / 1e6 / n,
                                "submits_per_s": n / (time.monotonic() - t_bucket)})
                points.append({"queued": len(ids), "rss_kb": self.rss_kb(proc.pid)})
                log(f"scale: {len(ids)} queued: RSS {fmt_mib(points[-1]['rss_kb'])}, submit p99 "
                    f"{fmt_ms(buckets[-1]['p99_ms'])}, service CPU {buckets[-1]['cpu_ms_per_submit']:.2f} ms/submit")
                lat, cpu0, t_bucket = [], cpu1, time.monotonic()
        return ids, points, buckets

    def scale_events(self, conn, follower, delivery):
        """A state change and its event: DELETE of a followed queued
        delivery, then its `finished` line read from its stream. (ms of the
        DELETE's answer, ms until the event was read)"""
        t0 = time.monotonic_ns()
        conn.request("DELETE", f"/v1/deliveries/{delivery}")
        r = conn.getresponse()
        raw = r.read()
        t1 = time.monotonic_ns()
        if r.status not in (200, 202):
            raise RuntimeError(f"scale: DELETE {delivery} answered {r.status}: {raw[:300]!r}")
        t2 = follower.wait_for(delivery, b'"event":"finished"')
        follower.close(delivery)
        return (t1 - t0) / 1e6, (t2 - t0) / 1e6

    def scale_idle(self, pid, seconds):
        """CPU and wakeups of the service over `seconds` while nothing moves."""
        c0, per0 = cpu_ns(pid)
        k0 = ticks(pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        c1, per1 = cpu_ns(pid)
        k1 = ticks(pid)
        wall = time.monotonic() - t0
        hz = os.sysconf("SC_CLK_TCK")
        threads = {}
        for name, (ns, slices, vol) in per1.items():
            b = per0.get(name, (0, 0, 0))
            if slices - b[1] or ns - b[0]:
                threads[name] = {"cpu_ms": (ns - b[0]) / 1e6, "wakeups": slices - b[1], "voluntary": vol - b[2]}
        wakeups = sum(t["wakeups"] for t in threads.values())
        return {"seconds": wall, "cpu_ms": (c1 - c0) / 1e6, "cpu_share": (c1 - c0) / 1e9 / wall,
                "ticks_cpu_ms": (k1 - k0) * 1000 / hz, "wakeups": wakeups, "wakeups_per_s": wakeups / wall,
                "threads": threads, "thread_count": len(per1)}

    def bench_scale(self):
        a = self.args
        queued, lanes_n, streams_n = a.scale_queued, a.scale_lanes, a.scale_streams
        marks = sorted({max(1, queued * f // 4) for f in (1, 2, 4)})
        stream_marks = sorted({max(1, streams_n * f // 4) for f in (1, 2, 4)})
        log(f"scale: {queued} deliveries over {lanes_n} held lanes, then {streams_n} event streams "
            f"({a.scale_workers} workers)")
        # The bench's own descriptors: a lock per lane and a socket per stream.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = lanes_n + streams_n + 3 * a.scale_events + 256
        if soft < need:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
        state = os.path.join(self.tmp, "scale")
        lanes = os.path.join(state, "lanes")
        os.makedirs(lanes, mode=0o700)
        src, info = self.gen_repo("scale-src", "--commits", "2")
        oid = self.rev_parse(src, "refs/heads/main")
        # Never contacted: port 9 (discard) on loopback; the lanes are held.
        # Spelt in their canonical form (no ".git"), which names the lane.
        urls = [f"https://127.0.0.1:9/scale-{i:04d}" for i in range(lanes_n)]
        held = self.hold_lanes(lanes, urls)
        sock = os.path.join(state, "serve.sock")
        proc, log_path = self.start_scale_service(state, sock, lanes)
        follower = None
        res = {"queued": queued, "lanes": lanes_n, "streams": streams_n, "workers": a.scale_workers, "warm": 0}
        try:
            res["fd_limit"] = {k: v for k, v in self.fd_limit_logged(log_path).items()
                               if k in ("soft_before", "soft", "connection_cap")}
            conn = UnixHTTPConnection(sock)
            t0 = time.monotonic()
            ids, qpoints, buckets = self.scale_queue(proc, conn, src, oid, urls, marks)
            res["queue_seconds"] = time.monotonic() - t0
            self.scale_check_queued(sock, lanes, lanes_n, ids)
            follower = Follower(sock)
            spoints, epoints, idle = self.scale_streams(proc, conn, follower, ids, stream_marks)
            res.update(rss_by_queued=qpoints, submit=buckets, rss_by_streams=spoints, events=epoints, idle=idle)
            res["kib_per_queued"] = slope([(p["queued"], p["rss_kb"]) for p in qpoints])
            res["kib_per_stream"] = slope([(p["streams"], p["rss_kb"]) for p in spoints])
            res["rss_kb"] = spoints[-1]["rss_kb"]
            conn.close()
            status, health = service_call(sock, "GET", "/healthz")
            res["drain"] = self.scale_stop(proc, health.get("queued") if status == 200 else None)
        finally:
            if follower:
                follower.close_all()
            end_group(proc)
            for fd in held:
                os.close(fd)
        self.results["scale"] = res
        self.scale_rows(res)
        self.plot_scale(res)

    def scale_check_queued(self, sock, lanes, lanes_n, ids):
        """Every delivery waits behind its held lane (state pending), and the
        service opened no lock file but those the bench holds."""
        files = [f for f in os.listdir(lanes) if f.endswith(".lock")]
        if len(files) != lanes_n:
            raise RuntimeError(f"scale: {len(files)} lock files in the lane directory, {lanes_n} expected: the lane "
                               "file names the bench holds are not the service's (src/seat/lane.cpp)")
        # A submission is answered before a worker has looked at the queue
        # again: the last ones may still be `queued` for a moment. Waited
        # for (the fact: the state the service reports), within 30 s.
        for d in (ids[0], ids[len(ids) // 2], ids[-1]):
            until = time.monotonic() + 30
            while True:
                status, body = service_call(sock, "GET", f"/v1/deliveries/{d}")
                if status == 200 and body.get("state") == "pending":
                    break
                if time.monotonic() > until or (status == 200 and body.get("state") != "queued"):
                    raise RuntimeError(f"scale: delivery {d} is {body.get('state') if body else status}, "
                                       "not pending")
                time.sleep(0.05)
        status, health = service_call(sock, "GET", "/healthz")
        if status != 200 or health.get("queued") != len(ids):
            raise RuntimeError(f"scale: /healthz says {health}, {len(ids)} queued expected")

    def scale_streams(self, proc, conn, follower, ids, marks):
        """Streams opened on queued deliveries (one per lane first) up to each
        mark: RSS; then, at each mark, --scale-events state changes and their
        events; at the last mark, first, the service idle."""
        spoints = [{"streams": 0, "rss_kb": self.rss_kb(proc.pid)}]
        epoints, idle = [], None
        nxt = 0
        for m in marks:
            while len(follower.socks) < m:
                follower.open(ids[nxt])
                nxt += 1
            spoints.append({"streams": len(follower.socks), "rss_kb": self.rss_kb(proc.pid)})
            log(f"scale: {len(follower.socks)} streams: RSS {fmt_mib(spoints[-1]['rss_kb'])}")
            if m == marks[-1]:
                idle = self.scale_idle(proc.pid, self.args.scale_idle_s)
                log(f"scale: idle {idle['seconds']:.1f} s: {idle['cpu_ms']:.1f} ms CPU, {idle['wakeups']} wakeups")
            open_streams = len(follower.socks)
            answers, events = [], []
            for d in list(follower.socks)[: self.args.scale_events]:
                ans, ev = self.scale_events(conn, follower, d)
                answers.append(ans)
                events.append(ev)
            epoints.append({"streams": open_streams, "n": len(events), "p50_ms": pct(events, 50),
                            "p99_ms": pct(events, 99), "delete_p50_ms": pct(answers, 50),
                            "delete_p99_ms": pct(answers, 99), "samples": events})
        return spoints, epoints, idle

    def scale_stop(self, proc, queued):
        """SIGTERM: the drain withdraws every queued delivery (each ends
        cancelled_no_dispatch, journalled). Its time, up to --scale-drain-s
        (then the service is killed: nothing of it runs, the directory goes)."""
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            code = proc.wait(timeout=self.args.scale_drain_s)
        except subprocess.TimeoutExpired:
            return {"seconds": None, "exit": None, "queued": queued}
        return {"seconds": time.monotonic() - t0, "exit": code, "queued": queued}

    def scale_rows(self, res):
        fl = res.get("fd_limit") or {}
        self.row("scale", f"service: {res['queued']} queued over {res['lanes']} held lanes, {res['streams']} streams",
                 f"RSS {fmt_mib(res['rss_kb'])}; fd soft limit {fl.get('soft_before', '?')} -> {fl.get('soft', '?')} "
                 "(raised by the service)")
        self.row("scale", "RSS by queued deliveries (no streams)",
                 "  ".join(f"{p['queued']}: {fmt_mib(p['rss_kb'])}" for p in res["rss_by_queued"]) +
                 f"  slope {res['kib_per_queued']:.2f} KiB/delivery")
        self.row("scale", f"RSS by open streams ({res['rss_by_queued'][-1]['queued']} queued)",
                 "  ".join(f"{p['streams']}: {fmt_mib(p['rss_kb'])}" for p in res["rss_by_streams"]) +
                 f"  slope {res['kib_per_stream']:.2f} KiB/stream")
        for b in res["submit"]:
            self.row("scale", f"submit POST -> 202, queue {b['from']}..{b['to']}",
                     f"p50 {fmt_ms(b['p50_ms'])}  p99 {fmt_ms(b['p99_ms'])}  service CPU "
                     f"{b['cpu_ms_per_submit']:.2f} ms/submit  {b['submits_per_s']:.0f}/s")
        for e in res["events"]:
            self.row("scale", f"DELETE -> finished event read, {e['streams']} streams open (n={e['n']})",
                     f"p50 {fmt_ms(e['p50_ms'])}  p99 {fmt_ms(e['p99_ms'])}  (DELETE answered p99 "
                     f"{fmt_ms(e['delete_p99_ms'])})")
        i = res["idle"]
        busiest = sorted(i["threads"].items(), key=lambda kv: -kv[1]["wakeups"])[:3]
        self.row("scale", f"idle {i['seconds']:.0f} s, nothing moving",
                 f"CPU {i['cpu_ms']:.1f} ms ({100 * i['cpu_share']:.3f}% of a core), {i['wakeups']} wakeups "
                 f"({i['wakeups_per_s']:.1f}/s) over {i['thread_count']} threads" +
                 ("; most: " + ", ".join(f"{n} {t['wakeups']}" for n, t in busiest) if busiest else ""))
        dr = res.get("drain") or {}
        self.row("scale", f"SIGTERM drain of {dr.get('queued')} queued deliveries",
                 f"not finished within {self.args.scale_drain_s:g} s (killed)" if dr.get("seconds") is None else
                 f"{dr['seconds']:.1f} s, exit {dr['exit']}")

    def plot_scale(self, res):
        """RSS against queued deliveries and against open streams, submit
        latency and CPU per submit against the queue, event latency against
        open streams: BUILD_DIR/scale-service.svg (--scale-plot)."""
        gnuplot = ensure_tool("gnuplot", "gnuplot-nox")
        if not gnuplot:
            raise RuntimeError("scale: gnuplot is missing and could not be installed (apt-get install gnuplot-nox); "
                               "the figures are in bench.json, the picture was not drawn")
        data = os.path.join(self.tmp, "scale-plot")
        os.makedirs(data, exist_ok=True)

        def write(name, rows):
            path = os.path.join(data, name)
            with open(path, "w") as f:
                f.writelines(" ".join(f"{v:.4f}" for v in r) + "\n" for r in rows)
            return path
        q = write("queued.dat", [(p["queued"], p["rss_kb"] / 1024) for p in res["rss_by_queued"]])
        s = write("streams.dat", [(p["streams"], p["rss_kb"] / 1024) for p in res["rss_by_streams"]])
        sub = write("submit.dat", [(b["to"], b["p50_ms"], b["p99_ms"], b["cpu_ms_per_submit"]) for b in res["submit"]])
        ev = write("events.dat", [(e["streams"], e["p50_ms"], e["p99_ms"]) for e in res["events"]])
        out = os.path.abspath(self.args.scale_plot or os.path.join(self.build, "scale-service.svg"))
        term = "pngcairo size 1200,800" if out.endswith(".png") else "svg size 1200,800 dynamic font 'sans,12'"
        when = time.strftime("%Y-%m-%d", time.gmtime())
        lp = "with linespoints lw 2 ps 1.2"
        script = [f"set terminal {term}", f"set output '{out}'",
                  f"set multiplot layout 2,2 title 'git-courier serve: {res['queued']} queued deliveries over "
                  f"{res['lanes']} held lanes, {res['streams']} event streams ({when}, {os.cpu_count()} cores)'",
                  "set grid", "set key top left", "set yrange [0:*]",
                  "set title 'RSS against queued deliveries (no streams)'", "set xlabel 'queued deliveries'",
                  "set ylabel 'MiB'", f"plot '{q}' using 1:2 {lp} pt 7 title 'RSS'",
                  f"set title 'RSS against open event streams ({res['rss_by_queued'][-1]['queued']} queued)'",
                  "set xlabel 'open event streams'", f"plot '{s}' using 1:2 {lp} pt 7 title 'RSS'",
                  "set title 'submit: POST -> 202, and the service CPU per submit'",
                  "set xlabel 'queued deliveries (end of each interval)'", "set ylabel 'ms'",
                  f"plot '{sub}' using 1:2 {lp} pt 7 title 'p50', '{sub}' using 1:3 {lp} pt 5 title 'p99', "
                  f"'{sub}' using 1:4 {lp} pt 9 title 'CPU ms per submit'",
                  "set title 'event latency: DELETE sent -> finished event read'", "set xlabel 'open event streams'",
                  f"plot '{ev}' using 1:2 {lp} pt 7 title 'p50', '{ev}' using 1:3 {lp} pt 5 title 'p99'",
                  "unset multiplot"]
        r = self.run([gnuplot], input="\n".join(script) + "\n", check=False)
        if r.returncode != 0:
            raise RuntimeError(f"scale: gnuplot failed: {r.stderr.strip()[-1000:]}")
        res["plot"] = out
        self.row("scale", "picture", out)
