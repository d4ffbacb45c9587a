# ssh_push.py — the ssh section: pushes over SSH to a real sshd (Debian's openssh-server, started here
# on loopback with its own host key and an authorized_keys for a key made here), git-courier push
# (--auth ssh-key:, the parent as the agent) against git push over ssh (the same key, the same known
# hosts), interleaved: N small pushes each, then the full history of the large repository once each.
import os
import random
import socket
import subprocess
import time

from common import end_group, ensure_tool, fmt_ms, log, pct


class SshServer:
    """sshd -D on 127.0.0.1 and a free port, its configuration, host key,
    authorized_keys and log in `root` (a directory of this run)."""

    def __init__(self, bench, root, authorized_line):
        self.bench = bench
        self.root = root
        os.makedirs(root, mode=0o700)
        self.host_key = os.path.join(root, "host_ed25519")
        bench.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.host_key])
        with open(os.path.join(root, "authorized_keys"), "w") as f:
            f.write(authorized_line + "\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = os.path.join(root, "sshd_config")
        with open(config, "w") as f:
            f.write("\n".join([
                "ListenAddress 127.0.0.1", f"Port {self.port}", f"HostKey {self.host_key}",
                f"AuthorizedKeysFile {root}/authorized_keys", f"PidFile {root}/sshd.pid",
                "StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password", "LogLevel ERROR", ""]))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        sshd = ensure_tool("sshd", "openssh-server") or "/usr/sbin/sshd"
        self.proc = subprocess.Popen([sshd, "-D", "-e", "-f", config, "-E", os.path.join(root, "sshd.log")],
                                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the fact waited for: the port takes a connection
            if self.proc.poll() is not None:
                raise RuntimeError(f"ssh: sshd exited {self.proc.returncode} at start (see {root}/sshd.log)")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.02)
        else:
            raise RuntimeError("ssh: sshd did not listen within 10 s")
        with open(self.host_key + ".pub") as f:
            kind, blob = f.read().split()[:2]
        self.known_hosts = os.path.join(root, "known_hosts")
        with open(self.known_hosts, "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {kind} {blob}\n")

    def stop(self):
        end_group(self.proc)


class SshPush:
    def bench_ssh(self):
        if not ensure_tool("ssh", "openssh-client"):
            raise RuntimeError("ssh: OpenSSH's ssh is missing and cannot be installed")
        key = os.path.join(self.tmp, "ssh-key")
        self.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key])
        with open(key + ".pub") as f:
            server = SshServer(self, os.path.join(self.tmp, "sshd"), f.read().strip())
        try:
            user = subprocess.run(["id", "-un"], stdout=subprocess.PIPE, text=True).stdout.strip()
            git_ssh = (f"ssh -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityFile={key} -o IdentityAgent=none "
                       f"-o UserKnownHostsFile={server.known_hosts} -o GlobalKnownHostsFile=none "
                       "-o StrictHostKeyChecking=yes")
            ctx = {"key": key, "known_hosts": server.known_hosts, "git_ssh": git_ssh,
                   "base": f"ssh://{user}@127.0.0.1:{server.port}"}
            self.ssh_small(ctx)
            self.ssh_large(ctx)
        finally:
            server.stop()

    def ssh_courier_push(self, ctx, repo, url, oid, lanes, deadline="60s"):
        cmd = [self.bin("git-courier"), "push", "--repo", repo, "--remote", url, "--ref", "refs/heads/main",
               "--oid", oid, "--auth", f"ssh-key:{ctx['key']}", "--known-hosts", ctx["known_hosts"],
               "--lane-dir", lanes, "--deadline", deadline, "--json",
               "--journal", os.path.join(self.tmp, "state", "journal.sqlite")]
        t0 = time.monotonic_ns()
        r = self.run(cmd, check=False)
        ms = (time.monotonic_ns() - t0) / 1e6
        if r.returncode != 0:
            raise RuntimeError(f"ssh: git-courier push exited {r.returncode}: {r.stderr.strip()[-1500:]}")
        return ms

    def ssh_git_push(self, ctx, repo, url, oid):
        t0 = time.monotonic_ns()
        self.run(["git", "--git-dir", repo, "push", "--quiet", url, f"{oid}:refs/heads/main"],
                 env=dict(self.env(), GIT_SSH_COMMAND=ctx["git_ssh"]))
        return (time.monotonic_ns() - t0) / 1e6

    def ssh_bare(self, name):
        path = os.path.join(self.tmp, "ssh-repos", name + ".git")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.git("init", "-q", "--bare", path)
        return path

    def ssh_small(self, ctx):
        n = self.args.n
        log(f"ssh: {n} small pushes each of git-courier (--auth ssh-key:) and git push over ssh, interleaved")
        src, _ = self.gen_repo("ssh-small-src", "--commits", str(2 * (n + 2) + 1))
        commits = self.git("--git-dir", src, "rev-list", "--reverse", "main").stdout.split()
        remote = self.ssh_bare("small")
        url = ctx["base"] + remote
        lanes = os.path.join(self.tmp, "lanes-ssh")
        nxt = iter(commits)
        self.ssh_git_push(ctx, src, url, next(nxt))
        self.ssh_courier_push(ctx, src, url, next(nxt), lanes)  # one warm-up each, not counted
        self.ssh_git_push(ctx, src, url, next(nxt))
        ms = {"courier": [], "git": []}
        for i in range(n):
            order = ["courier", "git"] if i % 2 == 0 else ["git", "courier"]
            for tool in order:
                oid = next(nxt)
                if tool == "git":
                    ms[tool].append(self.ssh_git_push(ctx, src, url, oid))
                else:
                    ms[tool].append(self.ssh_courier_push(ctx, src, url, oid, lanes))
                if self.rev_parse(remote, "refs/heads/main") != oid:
                    raise RuntimeError(f"ssh: the remote's main is not {oid} after the {tool} push")
        ratio = pct(ms["courier"], 50) / pct(ms["git"], 50)
        rng = random.Random(20261203)
        boot = sorted(pct([rng.choice(ms["courier"]) for _ in ms["courier"]], 50) /
                      pct([rng.choice(ms["git"]) for _ in ms["git"]], 50) for _ in range(2000))
        self.results["ssh_small"] = {"courier_ms": ms["courier"], "git_ms": ms["git"], "ratio_p50": ratio,
                                     "ratio_p50_ci95": [boot[49], boot[1949]]}
        for tool, label in (("courier", "git-courier push"), ("git", "git push")):
            self.row("ssh", f"small push p50 / p90, {label} (n={n})",
                     f"{fmt_ms(pct(ms[tool], 50))} / {fmt_ms(pct(ms[tool], 90))}")
        self.row("ssh", "small push p50 ratio (git-courier / git push)",
                 f"{ratio:.2f}x (95% interval {boot[49]:.2f}-{boot[1949]:.2f})")

    def ssh_large(self, ctx):
        log(f"ssh: the full history of a {self.args.large_objects}-object repository, once each")
        src, info = self.gen_repo("ssh-large-src", "--objects", str(self.args.large_objects))
        tip = self.git("--git-dir", src, "rev-parse", "main").stdout.strip()
        out = {}
        for tool in ("git", "courier"):
            remote = self.ssh_bare(f"large-{tool}")
            url = ctx["base"] + remote
            if tool == "git":
                out[tool] = self.ssh_git_push(ctx, src, url, tip)
            else:
                out[tool] = self.ssh_courier_push(ctx, src, url, tip, os.path.join(self.tmp, "lanes-ssh-large"),
                                                  deadline=self.args.large_deadline)
            if self.rev_parse(remote, "refs/heads/main") != tip:
                raise RuntimeError(f"ssh: the large remote's main is not {tip} after the {tool} push")
        ratio = out["courier"] / out["git"]
        self.results["ssh_large"] = dict(out, ratio=ratio, objects=info.get("objects"))
        self.row("ssh", f"large push ({info.get('objects', '?')} objects), git-courier / git push",
                 f"{fmt_ms(out['courier'])} / {fmt_ms(out['git'])} = {ratio:.2f}x")
