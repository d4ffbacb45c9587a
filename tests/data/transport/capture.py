#!/usr/bin/env python3
# capture.py — records what a real `git http-backend` says on the wire.
#
# The transport tests must parse bytes a real server produced, not bytes we
# imagined. This script builds bare repositories in a temporary directory,
# runs `git http-backend` as a CGI program (the way nginx + fcgiwrap or
# Apache run it), feeds it real receive-pack requests whose packs come from
# `git pack-objects`, and writes the response bodies out as
#   tests/data/transport/captures.hpp   (C++ string literals for the tests)
#   fuzz/corpus/transport/*             (seed inputs for the fuzzer)
# Commits use fixed names and dates, so object ids are stable between runs;
# only the server's `agent=git/<version>` changes with the installed git.
#
# Usage: tests/data/transport/capture.py   (needs git on PATH)
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]
OUT_HEADER = ROOT / "tests/data/transport/captures.hpp"
OUT_CORPUS = ROOT / "fuzz/corpus/transport"
ZERO = "0" * 40
# What the client asks for; the agent matches what git-courier sends.
AGENT = "agent=git-courier/0.1.0"


def base_env(home):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "Courier Test",
        "GIT_AUTHOR_EMAIL": "courier@example.invalid",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_NAME": "Courier Test",
        "GIT_COMMITTER_EMAIL": "courier@example.invalid",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
        "LC_ALL": "C",
    }
    return env


def run(args, env, cwd=None, data=None):
    p = subprocess.run(args, env=env, cwd=cwd, input=data, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"capture: {' '.join(args)} failed: {p.stderr.decode(errors='replace')}")
    return p.stdout


def pkt(payload: bytes) -> bytes:
    return b"%04x" % (len(payload) + 4) + payload


class Capture:
    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.env = base_env(str(self.tmp))
        self.srv = self.tmp / "srv"
        self.srv.mkdir()
        self.work = self.tmp / "work"
        self.git("init", "-q", "-b", "main", str(self.work))
        self.c1 = self.commit("a.txt", "first\n" * 200, "first")
        self.c2 = self.commit("b.txt", "second\n" * 200, "second")
        self.git("-C", str(self.work), "checkout", "-q", "-b", "side", self.c1)
        self.c3 = self.commit("c.txt", "third\n" * 200, "third")

    def git(self, *args, data=None):
        return run(["git", *args], self.env, data=data)

    def commit(self, name, text, message):
        (self.work / name).write_text(text)
        self.git("-C", str(self.work), "add", name)
        self.git("-C", str(self.work), "commit", "-q", "-m", message)
        return self.git("-C", str(self.work), "rev-parse", "HEAD").decode().strip()

    def bare(self, name, refs=None, config=None, fmt=None, hook=None):
        path = self.srv / name
        args = ["init", "-q", "--bare"]
        if fmt:
            args.append(f"--object-format={fmt}")
        self.git(*args, str(path))
        self.git("-C", str(path), "config", "http.receivepack", "true")
        for key, value in (config or {}).items():
            self.git("-C", str(path), "config", key, value)
        if refs:
            self.git("-C", str(self.work), "push", "-q", str(path), *[f"{oid}:{ref}" for ref, oid in refs.items()])
        if hook:
            h = path / "hooks" / "pre-receive"
            h.write_text(hook)
            h.chmod(0o755)
        return name

    def cgi(self, repo, method, suffix, query="", body=b"", content_type=None):
        env = dict(self.env)
        env.update({
            "GIT_PROJECT_ROOT": str(self.srv),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": f"/{repo}/{suffix}",
            "QUERY_STRING": query,
            "REMOTE_USER": "courier",
            "REMOTE_ADDR": "127.0.0.1",
        })
        if method == "POST":
            env["CONTENT_TYPE"] = content_type
            env["CONTENT_LENGTH"] = str(len(body))
        out = run(["git", "http-backend"], env, data=body)
        head, sep, rest = out.partition(b"\r\n\r\n")
        if not sep:
            sys.exit(f"capture: no CGI header block from http-backend for {repo}")
        return head.decode(), rest

    def advertisement(self, repo):
        head, body = self.cgi(repo, "GET", "info/refs", "service=git-receive-pack")
        return head, body

    def push(self, repo, old, new, ref, caps, revs, truncate=False):
        pack = self.git("-C", str(self.work), "pack-objects", "--stdout", "--revs", "-q",
                        data=("\n".join(revs) + "\n").encode())
        if truncate:
            pack = pack[: len(pack) // 2]
        body = pkt(f"{old} {new} {ref}\0{caps}".encode()) + b"0000" + pack
        return self.cgi(repo, "POST", "git-receive-pack", body=body,
                        content_type="application/x-git-receive-pack-request")


def main():
    tmp = tempfile.mkdtemp(prefix="courier-capture-")
    try:
        cap = Capture(tmp)
        c1, c2, c3 = cap.c1, cap.c2, cap.c3
        main_ref = "refs/heads/main"
        plain = f"report-status {AGENT}"
        sideband = f"report-status side-band-64k quiet object-format=sha1 {AGENT}"
        items = []  # (name, comment, bytes)

        head, adv_empty = cap.advertisement(cap.bare("empty.git"))
        ctype = next(l.split(":", 1)[1].strip() for l in head.split("\r\n") if l.lower().startswith("content-type:"))
        items.append(("kAdvEmpty", "GET info/refs on an empty repository", adv_empty))
        _, adv_full = cap.advertisement(cap.bare("full.git", refs={main_ref: c1, "refs/heads/side": c3, "refs/tags/v1": c1}))
        items.append(("kAdvNonEmpty", "GET info/refs: main=C1, side=C3, tag v1=C1", adv_full))
        cap.bare("shared.git", refs={"refs/heads/main": c2})
        cap.bare("borrower.git")
        (cap.srv / "borrower.git/objects/info/alternates").write_text(str(cap.srv / "shared.git/objects") + "\n")
        _, adv_have = cap.advertisement("borrower.git")
        items.append(("kAdvHave", "GET info/refs on an empty repository whose alternate has main=C2", adv_have))
        cap.bare("borrower2.git", refs={main_ref: c1})
        (cap.srv / "borrower2.git/objects/info/alternates").write_text(str(cap.srv / "shared.git/objects") + "\n")
        _, adv_have2 = cap.advertisement("borrower2.git")
        items.append(("kAdvRefAndHave", "GET info/refs: main=C1, alternate has main=C2", adv_have2))
        _, adv_sha256 = cap.advertisement(cap.bare("sha256.git", fmt="sha256"))
        items.append(("kAdvSha256", "GET info/refs on an empty sha256 repository", adv_sha256))

        for suffix, caps in (("", plain), ("Sideband", sideband)):
            _, r = cap.push(cap.bare(f"create{suffix}.git"), ZERO, c1, main_ref, caps, [c1])
            items.append((f"kCreateOk{suffix}", f"create main at C1 ({caps})", r))
            _, r = cap.push(cap.bare(f"update{suffix}.git", refs={main_ref: c1}), c1, c2, main_ref, caps, [c2, "^" + c1])
            items.append((f"kUpdateOk{suffix}", f"update main C1 -> C2 ({caps})", r))
            items.append((f"kUpdateRequestPrefix{suffix}", "the request body, up to the pack, that produced the line above",
                          pkt(f"{c1} {c2} {main_ref}\0{caps}".encode()) + b"0000"))
            _, r = cap.push(cap.bare(f"stale{suffix}.git", refs={main_ref: c1}), c3, c2, main_ref, caps, [c2, "^" + c1])
            items.append((f"kStaleNg{suffix}", f"main is at C1, request says old=C3 new=C2 ({caps})", r))
            _, r = cap.push(cap.bare(f"nonff{suffix}.git", refs={main_ref: c2},
                                     config={"receive.denyNonFastForwards": "true"}),
                            c2, c3, main_ref, caps, [c3, "^" + c2])
            items.append((f"kNonFastForwardNg{suffix}", f"main C2 -> C3 with denyNonFastForwards ({caps})", r))
            _, r = cap.push(cap.bare(f"truncated{suffix}.git", refs={main_ref: c1}), c1, c2, main_ref, caps,
                            [c2, "^" + c1], truncate=True)
            items.append((f"kTruncatedPack{suffix}", f"update C1 -> C2 with the pack cut in half ({caps})", r))
        hook_ok = "#!/bin/sh\necho 'courier-hook: checking push' >&2\nexit 0\n"
        hook_no = "#!/bin/sh\necho 'courier-hook: pushes are closed' >&2\nexit 1\n"
        _, r = cap.push(cap.bare("hookok.git", refs={main_ref: c1}, hook=hook_ok), c1, c2, main_ref, sideband,
                        [c2, "^" + c1])
        items.append(("kHookProgressSideband", "update C1 -> C2, pre-receive hook writes to stderr (side-band-64k)", r))
        _, r = cap.push(cap.bare("hookno.git", refs={main_ref: c1}, hook=hook_no), c1, c2, main_ref, sideband,
                        [c2, "^" + c1])
        items.append(("kHookDeclinedSideband", "update C1 -> C2, pre-receive hook refuses (side-band-64k)", r))
        version = cap.git("--version").decode().strip()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        "// captures.hpp — bytes recorded from a real `git http-backend` (CGI).",
        "//",
        f"// Generated by tests/data/transport/capture.py with {version}; do not edit,",
        "// rerun the script. C1 <- C2 on main, C1 <- C3 on side; requests sent:",
        f"//   plain:     \"{plain}\"",
        f"//   side-band: \"{sideband}\"",
        "#pragma once",
        "",
        "#include <string_view>",
        "",
        "namespace courier::test::captures {",
        "",
        f'inline constexpr std::string_view kC1 = "{c1}";',
        f'inline constexpr std::string_view kC2 = "{c2}";',
        f'inline constexpr std::string_view kC3 = "{c3}";',
        f'inline constexpr std::string_view kAdvertisementContentType = "{ctype}";',
        f'inline constexpr std::string_view kServerAgent = "agent=git/{version.split()[-1]}";',
        "",
    ]
    for name, comment, data in items:
        lines.append(f"// {comment}")
        lines.append(f"inline constexpr std::string_view {name} = {cxx_literal(data)};")
        lines.append("")
    lines.append("}  // namespace courier::test::captures")
    OUT_HEADER.write_text("\n".join(lines) + "\n")

    OUT_CORPUS.mkdir(parents=True, exist_ok=True)
    for name, _, data in items:
        (OUT_CORPUS / snake(name)).write_bytes(data)
    print(f"capture: wrote {OUT_HEADER.relative_to(ROOT)} and {len(items)} seeds in {OUT_CORPUS.relative_to(ROOT)}")


def cxx_literal(data: bytes) -> str:
    parts, cur = [], []
    for b in data:
        c = chr(b)
        if c == "\\":
            cur.append("\\\\")
        elif c == '"':
            cur.append('\\"')
        elif c == "\n":
            cur.append("\\n")
            parts.append("".join(cur))
            cur = []
            continue
        elif 0x20 <= b < 0x7F and c != "?":
            cur.append(c)
        else:
            cur.append("\\%03o" % b)  # octal: never swallows a following digit
    if cur:
        parts.append("".join(cur))
    body = "\n    ".join(f'"{p}"' for p in parts) if parts else '""'
    return f"std::string_view{{\n    {body},\n    {len(data)}}}"


def snake(name: str) -> str:
    name = name[1:]  # drop the k
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in name).lstrip("_")


if __name__ == "__main__":
    main()
