// commands.cpp — `git-courier` subcommands: help, version, push, keygen,
// self-check.
#include "cli/commands.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "auth/ed25519_minter.hpp"
#include "cli/args.hpp"
#include "cli/push.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "protocol/session.hpp"
#include "wire/child_argv.hpp"

namespace courier::cli {

namespace {

constexpr const char* kUsage =
    "usage: git-courier <command> [options]\n"
    "\n"
    "Delivers one git object to one ref on a remote over smart HTTPS, with a hard\n"
    "deadline, one live delivery per remote, and credentials kept in this process.\n"
    "\n"
    "commands:\n"
    "  push        deliver an object to a ref (see `git-courier push --help`)\n"
    "  keygen      make an Ed25519 signing key for --auth key:FILE\n"
    "  self-check  encode and decode every protocol message, check the frame caps\n"
    "\n"
    "  --help      this text\n"
    "  --version   print the version\n";

constexpr const char* kPushUsage =
    "usage: git-courier push --repo DIR --remote URL --ref REF (--oid OID | --rev REV)\n"
    "                        [--deadline DURATION] [--auth none|key:FILE|credential|bearer:FILE]\n"
    "                        [--ca-file FILE] [--lane-dir DIR] [--allow-http-loopback]\n"
    "                        [--pack-engine libgit2|git] [--json] [--quiet]\n"
    "\n"
    "  --repo DIR             local repository holding the object (never written to)\n"
    "  --remote URL           https:// smart-HTTP remote (http:// only to loopback, with\n"
    "                         --allow-http-loopback); no password in it, no '.', '..', '//'\n"
    "                         or needless %-escapes in its path\n"
    "  --ref REF              remote ref to update, e.g. refs/heads/main\n"
    "  --oid OID | --rev REV  the object to deliver: a full id, or a revision to resolve\n"
    "  --deadline DURATION    absolute budget for the whole delivery, including waiting\n"
    "                         for the remote's lane (ms, s or m; default 150s)\n"
    "  --auth MODE            none (default), key:FILE (Ed25519 per-request token),\n"
    "                         credential (git credential helper), bearer:FILE\n"
    "  --ca-file FILE         trust anchors for TLS (otherwise SSL_CERT_FILE or the system)\n"
    "  --lane-dir DIR         directory of cross-process lane locks; an existing one must be\n"
    "                         owned by you or root and not writable by others (never chmodded)\n"
    "  --allow-http-loopback  permit plain http:// to 127.0.0.0/8 or ::1\n"
    "  --pack-engine ENGINE   libgit2 (default): libgit2's packbuilder in the child;\n"
    "                         git: `git pack-objects` from PATH, run inside the child's\n"
    "                         kill domain, reusing the repository's stored deltas\n"
    "  --json                 print one JSON object with the outcome on stdout\n"
    "  --quiet                print only errors\n"
    "\n"
    "exit codes: 0 delivered/up_to_date, 1 rejected, 2 usage, 3 transport/auth/spawn,\n"
    "            4 deadline_killed, 5 revoked/cancelled, 6 protocol_fault, 7 unconfirmed\n";

void usage_error(const std::string& message, const char* hint) {
  std::fprintf(stderr, "git-courier: %s\n%s", message.c_str(), hint);
}

int self_check() {
  using namespace protocol;
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++failures;
  };
  const std::vector<ChildMessage> child = {
      Hello{kProtocolVersion, 42, {"/proc/self/exe", std::string(wire::kChildWord)}, {"PATH"}, std::nullopt},
      Mint{std::string(kLegAdvertisement), "GET", "https://127.0.0.1/r.git/info/refs?service=git-receive-pack",
           std::nullopt, std::nullopt},
      Check{"upload"}, Progress{"pack", 3, 10},
      ResultMsg{"delivered", "refs/heads/main", std::string(40, 'a'), std::nullopt, std::nullopt,
                std::nullopt, 3, 1200}};
  for (const auto& m : child) {
    auto body = encode(m);
    auto back = body ? decode_child(*body) : Result<ChildMessage>(tl::unexpected(body.error()));
    check(back && *back == m, std::string("child message '") + type_name(m) + "' round-trips");
  }
  Job job;
  job.parent_pid = 1;
  job.repo = "/r";
  job.remote = "https://127.0.0.1/r.git";
  job.ref = "refs/heads/main";
  job.oid = std::string(40, 'a');
  job.deadline_mono_ns = 1;
  job.scratch_dir = "/tmp";
  const std::vector<ParentMessage> parent = {job, Minted{"advertisement", "Authorization: x", std::nullopt},
                                             Authority{"upload", true, std::nullopt}};
  for (const auto& m : parent) {
    auto body = encode(m);
    auto back = body ? decode_parent(*body) : Result<ParentMessage>(tl::unexpected(body.error()));
    check(back && *back == m, std::string("parent message '") + type_name(m) + "' round-trips");
  }
  check(!encode_frame(std::string(kMaxFrame + 1, 'x')), "writer refuses a frame of kMaxFrame + 1 bytes");
  check(encode_frame(std::string(kMaxFrame, 'x')).has_value(), "writer accepts a frame of exactly kMaxFrame bytes");
  FrameDecoder d;
  const char over[4] = {0x00, 0x10, 0x00, 0x01};
  d.feed(over, 4);
  auto r = d.next();
  check(!r && r.error().code == Errc::frame_too_large, "reader refuses an over-cap length from the header");
  ParentSession s({std::string(40, 'a'), false, kMaxMints, kProtocolVersion, "refs/heads/main"});
  check(!s.accept(Check{"x"}), "a message before hello is refused");
  std::printf("%s\n", failures == 0 ? "self-check passed" : "self-check FAILED");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    usage_error("no command given", kUsage);
    return kExitUsage;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "--version") {
    std::printf("git-courier %s (protocol %d)\n", COURIER_VERSION, protocol::kProtocolVersion);
    return kExitOk;
  }
  if (cmd == "self-check") return self_check();
  if (cmd == "push") {
    auto parsed = parse_push_args(rest);
    if (!parsed) {
      usage_error(parsed.error().message, "see `git-courier push --help`\n");
      return kExitUsage;
    }
    if (parsed->help) {
      std::fputs(kPushUsage, stdout);
      return kExitOk;
    }
    return run_push(*parsed);
  }
  if (cmd == "keygen") {
    auto parsed = parse_keygen_args(rest);
    if (!parsed) {
      usage_error(parsed.error().message, "usage: git-courier keygen --out FILE\n");
      return kExitUsage;
    }
    if (parsed->help) {
      std::fputs("usage: git-courier keygen --out FILE\n", stdout);
      return kExitOk;
    }
    auto key = auth::keygen(parsed->out);
    if (!key) {
      std::fprintf(stderr, "git-courier: keygen: %s\n", key.error().message.c_str());
      return kExitUsage;
    }
    std::printf("wrote %s\npublic key (Ed25519, base64url): %s\nkid (JWK thumbprint): %s\n", parsed->out.c_str(),
                key->public_key.c_str(), key->thumbprint.c_str());
    return kExitOk;
  }
  usage_error("unknown command '" + cmd + "'", kUsage);
  return kExitUsage;
}

}  // namespace courier::cli
