// commands.cpp — `git-courier` subcommands: help, version, push, keygen.
#include "cli/commands.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "auth/ed25519_minter.hpp"
#include "cli/args.hpp"
#include "cli/journal_cmd.hpp"
#include "cli/push.hpp"
#include "protocol/messages.hpp"

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
    "  log         recent deliveries from the journal, one line each\n"
    "  show ID     every transition of one delivery, with times\n"
    "  recover     finish deliveries a dead process left unfinished in the journal\n"
    "\n"
    "  --help      this text\n"
    "  --version   print the version\n";

constexpr const char* kPushUsage =
    "usage: git-courier push --repo DIR --remote URL|NAME --ref REF (--oid OID | --rev REV)\n"
    "                        [--force | --force-with-lease[=REF[:EXPECT]] | --expect-old OID]\n"
    "                        [--deadline DURATION] [--auth none|key:FILE|credential|bearer:FILE]\n"
    "                        [--ca-file FILE] [--lane-dir DIR] [--allow-http-loopback]\n"
    "                        [--pack-engine libgit2|git] [--json] [--quiet]\n"
    "                        [--journal FILE | --no-journal] [--delivery-id ID] [--read-back]\n"
    "\n"
    "  --repo DIR             local repository holding the object (never written to)\n"
    "  --remote URL|NAME      https:// smart-HTTP remote (http:// only to loopback, with\n"
    "                         --allow-http-loopback); no password in it, no '.', '..', '//'\n"
    "                         or needless %-escapes in its path; or the name of a remote\n"
    "                         configured in git (remote.NAME.pushurl, else remote.NAME.url)\n"
    "  --ref REF              remote ref to update, e.g. refs/heads/main (deleting a ref is\n"
    "                         not supported)\n"
    "  --oid OID | --rev REV  the object to deliver: a full id, or a revision to resolve\n"
    "  -f, --force            move the ref whatever the remote has (by default it moves\n"
    "                         only as `git push` moves it without force: a new ref, or a\n"
    "                         fast-forward of a branch; anything else is rejected, exit 1,\n"
    "                         before anything is sent)\n"
    "  --force-with-lease[=REF[:EXPECT]]\n"
    "                         move it only if the remote's ref is at EXPECT (a revision;\n"
    "                         empty: the ref must not exist); without :EXPECT, at the\n"
    "                         remote-tracking ref of a configured --remote NAME\n"
    "  --expect-old OID       move it only if the remote's ref is at OID (all zeros: absent)\n"
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
    "  --journal FILE         the delivery journal (default\n"
    "                         ${XDG_STATE_HOME:-$HOME/.local/state}/git-courier/journal.sqlite)\n"
    "  --no-journal           keep no record (nothing survives a crash of this command)\n"
    "  --delivery-id ID       the delivery's id: the same id is never pushed twice; after\n"
    "                         remote_effect `possible` it is delivered again as a\n"
    "                         compare-and-swap on the journalled old id\n"
    "  --read-back            after `possible`: read the remote's ref once (printed after the\n"
    "                         outcome; with --json, part of it)\n"
    "  --json                 print one JSON object with the outcome on stdout\n"
    "  --quiet                print only errors\n"
    "\n"
    "exit codes: 0 delivered/up_to_date, 1 rejected, 2 usage, 3 transport/auth/spawn,\n"
    "            4 deadline_killed, 5 revoked/cancelled, 6 protocol_fault,\n"
    "            7 unconfirmed/cancel_uncertain\n";

constexpr const char* kJournalUsage =
    "usage: git-courier log [--journal FILE] [--limit N] [--json]\n"
    "       git-courier show ID [--journal FILE] [--json]\n"
    "       git-courier recover [--journal FILE] [--lane-dir DIR] [--auth MODE] [--ca-file FILE]\n"
    "                           [--allow-http-loopback] [--json]\n"
    "\n"
    "recover finishes every delivery whose process is gone (pid, start time and boot id)\n"
    "and whose lane no live process holds, as `interrupted` with the remote_effect its\n"
    "journal allows, and reads the remote's ref back after `possible`. Running it twice\n"
    "changes nothing the second time.\n";

void usage_error(const std::string& message, const char* hint) {
  std::fprintf(stderr, "git-courier: %s\n%s", message.c_str(), hint);
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
  if (cmd == "log" || cmd == "show" || cmd == "recover") {
    auto parsed = parse_journal_args(cmd, rest);
    if (!parsed) {
      usage_error(parsed.error().message, kJournalUsage);
      return kExitUsage;
    }
    if (parsed->help) {
      std::fputs(kJournalUsage, stdout);
      return kExitOk;
    }
    if (cmd == "log") return run_log(*parsed);
    if (cmd == "show") return run_show(*parsed);
    return run_recover(*parsed);
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
