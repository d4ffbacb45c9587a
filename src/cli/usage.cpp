// usage.cpp — the command line's description (the table of usage.hpp) and
// the --help text rendered from it.
#include "cli/usage.hpp"

#include <algorithm>

#include "courier/exit_code.hpp"

namespace courier::cli {

namespace {

// Options that several commands share, spelled once.
constexpr OptionDoc kJournalOption = {
    "--journal", nullptr, "FILE",
    "the delivery journal (default, the same for push, serve, log, show and recover: "
    "~/.local/state/git-courier/journal.sqlite, ~ the home directory of your uid in the password database; for root "
    "/var/lib/git-courier/journal.db)",
    nullptr};
constexpr OptionDoc kStateOption = {
    "--state", nullptr, "URL",
    "where the journal lives, as a URL: sqlite:FILE (as --journal FILE) or postgres://[USER@]HOST[:PORT]/DATABASE "
    "(one journal for a fleet of hosts; libpq's URL and parameters; a password in it is never printed); not with "
    "--journal",
    nullptr};
constexpr OptionDoc kHostIdOption = {
    "--host-id", nullptr, "NAME",
    "this host's name in a shared state, journalled with each delivery (default: the host name)", nullptr};
constexpr OptionDoc kJsonOption = {"--json", nullptr, nullptr,
                                   "print one JSON object with the outcome on stdout (a usage error too: "
                                   "{\"outcome\":\"usage\",\"message\":...}, exit 2)",
                                   nullptr};
constexpr OptionDoc kAuthOption = {"--auth", nullptr, "MODE",
                                   "none (default), key:FILE (Ed25519 per-request token), credential (git credential "
                                   "helper), bearer:FILE; for an ssh remote ssh-key:FILE (a private key as ssh-keygen "
                                   "writes it, kept in this process: ssh signs through its agent)",
                                   "none credential key: bearer: ssh-key:"};
constexpr OptionDoc kCaFileOption = {"--ca-file", nullptr, "FILE",
                                     "the only CA trusted for TLS (otherwise GIT_SSL_CAINFO, http.<url>.sslCAInfo, "
                                     "http.sslCAInfo, or the system store)",
                                     nullptr};
constexpr OptionDoc kLaneDirOption = {"--lane-dir", nullptr, "DIR",
                                      "directory of cross-process lane locks (default, the same for push, serve and "
                                      "recover: ~/.local/state/git-courier/lanes; for root /run/git-courier/lanes); an "
                                      "existing one must be owned by you or root and not writable by others (never "
                                      "chmodded)",
                                      nullptr};
constexpr OptionDoc kLoopbackOption = {"--allow-http-loopback", nullptr, nullptr,
                                       "permit plain http:// to 127.0.0.0/8 or ::1", nullptr};

const std::vector<OptionDoc> kPushOptions = {
    {"--repo", nullptr, "DIR",
     "the local repository holding the object (never written to), found from DIR as `git -C DIR` finds it (a "
     "subdirectory of a work tree will do); default: found as git finds it, from GIT_DIR or the working directory",
     nullptr},
    {"--remote", nullptr, "URL|NAME",
     "as <remote>: https:// smart-HTTP remote (http:// only to loopback, with --allow-http-loopback), or an ssh "
     "remote (ssh://[USER@]HOST[:PORT]/PATH, git+ssh://, or [USER@]HOST:PATH, relative to the user's home); no "
     "password in it, no '.', "
     "'..', '//' or needless %-escapes in its path; or the name of a remote configured in git "
     "(remote.NAME.pushurl, else remote.NAME.url)",
     nullptr},
    {"--ref", nullptr, "REF",
     "remote ref to update, e.g. refs/heads/main, or a short name read as git reads <dst> (main: refs/heads/main "
     "when --rev names a branch, refs/tags/main when a tag); needs --rev or --oid (to delete a ref: the refspec "
     ":<ref>, or --delete)",
     nullptr},
    {"--oid", nullptr, "OID", "the object to deliver, as a full id", nullptr},
    {"--rev", nullptr, "REV",
     "the object to deliver, as a revision of --repo to resolve; with --ref, as <src>:<dst>; alone, as <src>", nullptr},
    {"--deadline", nullptr, "DURATION",
     "absolute budget for the whole delivery, including waiting for the remote's lane: seconds (90, 1.5) or numbers "
     "with units h, m, s, ms, largest first (500ms, 2m30s, 1h30m); at most 24h; default 150s",
     nullptr},
    {"--force", "-f", nullptr,
     "move the ref whatever the remote has (by default it moves only as `git push` moves it without force: a new "
     "ref, or a fast-forward of a branch; anything else is rejected, exit 1, before anything is sent)",
     nullptr},
    {"--force-with-lease", nullptr, nullptr,
     "or --force-with-lease=REF[:EXPECT]: move it only if the remote's ref is at EXPECT (a revision; empty: the ref "
     "must not exist); without :EXPECT, "
     "at the remote-tracking ref of a configured --remote NAME",
     nullptr},
    {"--expect-old", nullptr, "OID",
     "move it only if the remote's ref is at OID (all zeros: absent); one ref only (with several, "
     "--force-with-lease=REF:EXPECT each)",
     nullptr},
    {"--atomic", nullptr, nullptr,
     "every ref moves or none does (receive-pack's atomic capability); the default for more than one ref: a remote "
     "without it is refused before anything is sent",
     nullptr},
    {"--no-atomic", nullptr, nullptr, "each ref succeeds or fails on its own, as git push without --atomic", nullptr},
    {"--push-option", "-o", "OPTION",
     "a push option for the server's hooks (GIT_PUSH_OPTION_<n>), repeatable, in order; none given: git's "
     "push.pushOption; an empty one clears the list. At most 32, each at most 4096 bytes, no newline; the remote "
     "must advertise push-options",
     nullptr},
    {"--delete", "-d", nullptr, "every <refspec> names a remote ref to delete (as :<ref>)", nullptr},
    kAuthOption,
    kCaFileOption,
    {"--known-hosts", nullptr, "FILE",
     "ssh remotes: the known-hosts file the host key must be in (default ~/.ssh/known_hosts); host keys are "
     "verified, never learned. The ssh program is GIT_SSH_COMMAND, core.sshCommand or GIT_SSH (a program only, "
     "no options), else /usr/bin/ssh",
     nullptr},
    {"--ssh-passphrase-file", nullptr, "FILE",
     "the passphrase of an encrypted ssh-key:FILE, its first line (a file of mode 0600 or stricter); default: asked "
     "on the terminal",
     nullptr},
    kLaneDirOption,
    kLoopbackOption,
    {"--pack-engine", nullptr, "ENGINE",
     "auto (default): git when a git 2.32.0 or later is on PATH, else libgit2; libgit2: libgit2's packbuilder in "
     "the child; git: `git pack-objects` from PATH, run inside the child's kill domain, reusing the repository's "
     "stored deltas",
     "auto libgit2 git"},
    kJournalOption,
    {"--no-journal", nullptr, nullptr, "keep no record (nothing survives a crash of this command)", nullptr},
    kStateOption,
    kHostIdOption,
    {"--delivery-id", nullptr, "ID",
     "the delivery's id: the same id is never pushed twice; after remote_effect `possible` it is delivered again as "
     "a compare-and-swap on the journalled old id",
     nullptr},
    {"--via", nullptr, "SOCKET",
     "submit the delivery to the service listening on this Unix socket (git-courier serve; its default is "
     "$XDG_RUNTIME_DIR/git-courier/serve.sock, /run/git-courier/serve.sock for root) and print its progress and "
     "outcome as a local push does, with the same exit codes; Ctrl-C revokes it through the service. The service "
     "owns keys, trust, lanes and journal: --auth, --ca-file, --allow-http-loopback, --lane-dir, --journal, "
     "--no-journal, --state, --host-id, --pack-engine and --read-back are refused with it",
     nullptr},
    {"--credential", nullptr, "NAME",
     "with --via: the service's credential to push with (serve --credential NAME=...); none: no credential", nullptr},
    {"--read-back", nullptr, nullptr,
     "after `possible`: read the remote's ref once (printed after the outcome; with --json, part of it)", nullptr},
    kJsonOption,
    {"--quiet", "-q", nullptr, "print only errors: no progress, no remote: lines", nullptr},
    {"--verbose", "-v", nullptr, "also print the supervisor's log lines (spawn, kill, stop)", nullptr},
    {"--progress", nullptr, nullptr, "show progress meters even when stderr is not a terminal", nullptr},
    {"--no-progress", nullptr, nullptr, "no progress meters, not even on a terminal", nullptr},
    {"--version", "-V", nullptr, "print the version and exit", nullptr},
};

constexpr OptionDoc kHelpOption = {"--help", "-h", nullptr, "print this text and exit", nullptr};

// The exit codes as the manual lists them: the rows of courier/exit_code.hpp.
std::vector<std::pair<const char*, const char*>> exit_code_pairs() {
  std::vector<std::pair<const char*, const char*>> out;
  for (const auto& row : kExitCodeRows) out.emplace_back(row.number.data(), row.meaning.data());
  return out;
}

const ManualDoc kManual = {
    "deliver one git object to one ref on a remote over smart HTTPS",
    {"Delivers one git object to one ref on a remote over smart HTTPS, with a hard deadline, one live delivery per "
     "remote, and credentials kept in this process. The push itself runs in a child process that the command "
     "supervises and kills at the deadline.",
     "On PATH, git runs it as `git courier`; `git courier --help` shows this page."},
    {"",
     "deliver objects to remotes",
     {"[-C DIR]... <command> [options]", "--version | -V | version", "--help | -h | help [COMMAND]"},
     {kHelpOption,
      {"--version", "-V", nullptr, "print the version and exit", nullptr},
      {"-C", nullptr, "DIR",
       "before the command: run as if started in DIR (as git -C; repeatable, each relative to the one before)",
       nullptr}},
     {}},
    {
        {"push",
         "deliver objects to refs",
         {"push [options] [--atomic | --no-atomic] [-o OPTION]... [<remote> [[+]<src>[:<dst>] | :<dst>]...]",
          "push [options] [--repo DIR] --remote URL|NAME [--ref REF] (--oid OID | --rev REV)",
          "     [--force | --force-with-lease[=REF[:EXPECT]] | --expect-old OID]",
          "     [--deadline DURATION] [--auth none|key:FILE|credential|bearer:FILE|ssh-key:FILE]",
          "     [--ca-file FILE] [--known-hosts FILE] [--ssh-passphrase-file FILE] [--lane-dir DIR]",
          "     [--allow-http-loopback]",
          "     [--pack-engine auto|libgit2|git] [--json] [-q | --quiet] [-v | --verbose]",
          "     [--progress | --no-progress]",
          "     [--journal FILE | --no-journal | --state URL] [--host-id NAME] [--delivery-id ID] [--read-back]",
          "push --via SOCKET [--credential NAME] [<remote> [<refspec>...] | --remote URL|NAME --ref REF",
          "     (--oid OID | --rev REV)] [--force | --force-with-lease[=REF[:EXPECT]] | --expect-old OID]",
          "     [--deadline DURATION] [--delivery-id ID] [--json] [-q | --quiet] [-v | --verbose]",
          "     [--progress | --no-progress]"},
         kPushOptions,
         {"The words are git push's: <remote> is a remote's name or a URL (default, as git's: "
          "branch.<name>.pushRemote, remote.pushDefault, branch.<name>.remote, the only remote, origin), rewritten "
          "by url.<base>.pushInsteadOf and insteadOf; <refspec> is [+]<src>[:<dst>], resolved as git resolves it: "
          "main is refs/heads/main when that is the only branch, tag or ref of the name, HEAD is the current "
          "branch, <src> may be any revision (an id, main~1) when <dst> is given in full, a short <dst> takes "
          "<src>'s namespace, and '+' forces (as --force; a lease or --expect-old given as well decides instead). "
          "With no refspec, remote.<remote>.push, then push.default as git reads it: simple (the default: the "
          "current branch, to its upstream of the same name), current, upstream; matching is refused (this "
          "command pushes the refs it is given) and nothing says so. The repository is found from the working "
          "directory, "
          "GIT_DIR, or -C DIR given before push.",
          "Several refspecs are one delivery (one advertisement, at most one POST), atomic by default (--no-atomic: "
          "each ref on its own); :<dst> (or --delete <dst>) deletes <dst>; each ref is told as git's summary tells "
          "it, and the exit code is 1 when any ref was refused, as git's. Refused, saying what git would do: "
          "wildcards (refs/heads/*:...), negative refspecs (^...), ':', --all, --branches, --mirror and --tags.",
          "Trust and the proxy come from git's configuration of --repo, as git reads them. The proxy: "
          "remote.<name>.proxy, http.<url>.proxy, http.proxy, then https_proxy/HTTPS_PROXY (http_proxy for "
          "http://), all_proxy/ALL_PROXY, minus NO_PROXY; only http:// proxies, as CONNECT tunnels (socks and https "
          "proxies are refused).",
          "With --via, the delivery runs in the service (docs/service.md): --remote NAME is read from --repo's "
          "configuration here and sent as its URL, --repo as an absolute path (it must be under the service's "
          "--repo-root). A service that cannot be reached, or that is draining or full (429), exits 3; a request "
          "it refuses (a 4xx: a bad field, an unknown credential, a repository outside its root, this user not "
          "allowed) exits 2, as a usage error does."}},
        {"serve",
         "run the delivery service: a socket API for any language",
         {"serve --repo-root DIR [--socket PATH] [--listen 127.0.0.1:PORT --api-token-file FILE]",
          "      [--workers N] [--warm N] [--journal FILE | --state URL | --state-file FILE] [--host-id NAME]",
          "      [--lane-dir DIR] [--credential NAME=key:FILE|bearer:FILE|ssh-key:FILE|credential]...",
          "      [--credential-scope NAME=URL]... [--allow-uid UID]... [--allow-gid GID]...",
          "      [--max-queued N] [--drain-timeout DURATION]",
          "      [--lease-ttl DURATION] [--lease-margin DURATION] [--stop-bound DURATION]",
          "      [--ca-file FILE] [--known-hosts FILE] [--allow-http-loopback] [--config FILE]"},
         {{"--repo-root", nullptr, "DIR", "only repositories under DIR (symbolic links resolved) may be delivered from",
           nullptr},
          {"--socket", nullptr, "PATH",
           "the Unix socket of the API (default $XDG_RUNTIME_DIR/git-courier/serve.sock; for root "
           "/run/git-courier/serve.sock); its directory is made 0750 when missing, an existing one must be yours and "
           "not writable by others; a lock file beside it (PATH.lock) keeps a second service off it",
           nullptr},
          {"--listen", nullptr, "127.0.0.1:PORT", "also serve on loopback TCP; requires --api-token-file", nullptr},
          {"--api-token-file", nullptr, "FILE",
           "the bearer token TCP callers must send (Authorization: Bearer TOKEN; at least 16 bytes)", nullptr},
          {"--workers", nullptr, "N", "deliveries supervised at once (default 4); more wait in the queue", nullptr},
          {"--warm", nullptr, "N", "keep N children spawned ahead of need (default 0)", nullptr},
          kJournalOption,
          kStateOption,
          {"--state-file", nullptr, "FILE",
           "the --state URL read from FILE (one line, a regular file of mode 0600 or stricter), so that a password in "
           "it stays out of the process list; a password in --state on the command line is warned about "
           "(config_warning): give it here, or let libpq read it from PGPASSFILE or PGPASSWORD",
           nullptr},
          kHostIdOption,
          kLaneDirOption,
          {"--credential", nullptr, "NAME=SPEC",
           "a credential requests may name: key:FILE (Ed25519 per-request token), bearer:FILE or credential (git "
           "credential helper) for https remotes, ssh-key:FILE (an SSH private key without a passphrase) for ssh "
           "remotes; repeatable; each needs --credential-scope of its kind of remote",
           nullptr},
          {"--credential-scope", nullptr, "NAME=URL",
           "a remote, or a URL prefix (whole path segments, same scheme, host and port), that credential NAME may be "
           "sent to; repeatable; a request naming NAME for any other remote is refused 403 credential_out_of_scope",
           nullptr},
          {"--allow-uid", nullptr, "UID", "a uid that may call on the socket (repeatable; default: the service's own)",
           nullptr},
          {"--allow-gid", nullptr, "GID",
           "a group whose members (primary or supplementary) may call on the socket (repeatable)", nullptr},
          {"--max-queued", nullptr, "N",
           "deliveries waiting to run before submissions are refused with 429 and Retry-After (default 256)", nullptr},
          {"--drain-timeout", nullptr, "DURATION",
           "on SIGTERM or SIGINT, how long running deliveries may finish before they are revoked (default 30s); "
           "the service then exits 0, or 7 when a delivery of its life ended with an unconfirmed stop",
           nullptr},
          {"--lease-ttl", nullptr, "DURATION",
           "with a postgres:// state, a lane's lease lives this long by the database's clock and is renewed every "
           "third of it (default 60s)",
           nullptr},
          {"--lease-margin", nullptr, "DURATION",
           "taken off the lease by its holder (its child is killed at the last confirmed renewal's send + ttl - "
           "margin) and added by the next holder (default 12s); at least twice --stop-bound, under two thirds of "
           "--lease-ttl",
           nullptr},
          {"--stop-bound", nullptr, "DURATION",
           "how long a killed child's reap, then the end of its pipes, are each waited for before its stop counts "
           "as unconfirmed and the lane is poisoned (default 5s)",
           nullptr},
          kCaFileOption,
          {"--known-hosts", nullptr, "FILE",
           "ssh remotes: the known-hosts file host keys are verified against (default ~/.ssh/known_hosts of the "
           "service's user)",
           nullptr},
          kLoopbackOption,
          {"--config", nullptr, "FILE",
           "a JSON object whose keys are these options without dashes (lists for the repeatable ones); options on "
           "the command line win",
           nullptr}},
         {"The API is HTTP/1.1 and JSON under /v1 (POST /v1/deliveries, GET /v1/deliveries/ID, GET "
          "/v1/deliveries/ID/events, DELETE /v1/deliveries/ID, GET /v1/deliveries, GET /healthz, GET /metrics); "
          "the service logs one JSON object per line on stderr. SIGTERM or SIGINT drains: new submissions get 503, "
          "running deliveries finish or are revoked after --drain-timeout, and the service exits 0 once every "
          "delivery's stop is confirmed. See docs/service.md."}},
        {"keygen",
         "make an Ed25519 signing key for --auth key:FILE",
         {"keygen --out FILE"},
         {{"--out", nullptr, "FILE", "where to write the private key (created 0600; never overwritten)", nullptr}},
         {}},
        {"log",
         "recent deliveries from the journal, one line each",
         {"log [--journal FILE | --state URL] [--limit N] [--json]"},
         {kJournalOption,
          kStateOption,
          {"--limit", nullptr, "N", "how many deliveries, newest first (1 to 999999; default 20)", nullptr},
          kJsonOption},
         {}},
        {"show",
         "every transition of one delivery, with times",
         {"show ID [--journal FILE | --state URL] [--json]"},
         {kJournalOption, kStateOption, kJsonOption},
         {}},
        {"recover",
         "finish deliveries a dead process left unfinished in the journal",
         {"recover [--journal FILE | --state URL] [--host-id NAME] [--lane-dir DIR] [--auth MODE] [--ca-file FILE]",
          "        [--allow-http-loopback] [--json]"},
         {kJournalOption, kStateOption, kHostIdOption, kLaneDirOption, kAuthOption, kCaFileOption, kLoopbackOption,
          kJsonOption},
         {"recover finishes every delivery whose process is gone (pid, start time and boot id) and whose lane no "
          "live process holds, as `interrupted` with the remote_effect its journal allows, and reads the remote's "
          "ref back after `possible`. Running it twice changes nothing the second time. With a postgres:// state, "
          "another host's delivery is finished only when that host shows no life and the lane's lease has expired "
          "plus the margin."}},
        {"version", "print the version (as --version)", {"version"}, {}, {}},
        {"help", "this text, or a command's (as COMMAND --help)", {"help [COMMAND]"}, {}, {}},
    },
    exit_code_pairs(),
    {{"GIT_SSL_CAINFO", "trust anchors for TLS when --ca-file is not given (over http.sslCAInfo)"},
     {"SSL_CERT_FILE", "the system store's trust anchors when nothing else names them"},
     {"HTTPS_PROXY, https_proxy, http_proxy, ALL_PROXY, NO_PROXY",
      "the proxy, as git reads them (http.proxy and remote.<name>.proxy win)"},
     {"XDG_RUNTIME_DIR", "where the service's default socket lives (not for root)"},
     {"GIT_COURIER_TEST_ROOT",
      "for the test suites only: a private directory the default journal, lanes and root's socket are taken under"}},
    {{"~/.local/state/git-courier/journal.sqlite",
      "the delivery journal (--journal); ~ is your uid's home directory in the password database, whatever HOME "
      "and XDG_STATE_HOME say; /var/lib/git-courier/journal.db for root"},
     {"~/.local/state/git-courier/lanes",
      "the lane locks (--lane-dir), shared by push, serve and recover; /run/git-courier/lanes for root"},
     {"$XDG_RUNTIME_DIR/git-courier/serve.sock",
      "the service's socket (serve --socket); /run/git-courier/serve.sock "
      "for root"}},
};

// Appends text wrapped to `width` columns, each line after the first
// starting with `indent` spaces, the first continuing at column `column`.
void append_wrapped(std::string& out, std::string_view text, std::size_t column, std::size_t indent,
                    std::size_t width) {
  std::size_t pos = 0;
  bool first_word = true;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    const std::string_view word = text.substr(pos, end - pos);
    if (!first_word && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first_word) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first_word = false;
    pos = end + 1;
  }
  out += '\n';
}

constexpr std::size_t kTextColumn = 25;
constexpr std::size_t kWidth = 80;

void append_options(std::string& out, const std::vector<OptionDoc>& options) {
  for (const auto& o : options) {
    std::string head = std::string("  ") + o.name;
    if (o.alias) head += std::string(", ") + o.alias;
    if (o.arg) head += std::string(" ") + o.arg;
    if (head.size() + 1 >= kTextColumn) {
      out += head + "\n" + std::string(kTextColumn, ' ');
    } else {
      out += head + std::string(kTextColumn - head.size(), ' ');
    }
    append_wrapped(out, o.text, kTextColumn, kTextColumn, kWidth);
  }
}

// "usage: git-courier LINE" for the first line, then each line under it; a
// line that starts with a space continues the one before.
void append_synopsis(std::string& out, const CommandDoc& command) {
  for (std::size_t i = 0; i < command.synopsis.size(); ++i) {
    const std::string_view line = command.synopsis[i];
    const bool continued = line.front() == ' ';
    out += std::string(i == 0 ? "usage: " : "       ") + (continued ? "            " : "git-courier ");
    out += std::string(line) + "\n";
  }
}

}  // namespace

const ManualDoc& manual() { return kManual; }

const CommandDoc* find_command(std::string_view name) {
  for (const auto& c : kManual.commands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string help_text() {
  std::string out;
  append_synopsis(out, kManual.program);
  for (const char* p : kManual.description) {
    out += "\n";
    append_wrapped(out, p, 0, 0, kWidth);
  }
  out += "\ncommands:\n";
  for (const auto& c : kManual.commands) {
    std::string head = std::string("  ") + c.name;
    out += head + std::string(14 - head.size(), ' ') + c.summary + "\n";
  }
  out += "\n";
  append_options(out, kManual.program.options);
  out += "\nSee `git-courier COMMAND --help` or `man git-courier`.\n";
  return out;
}

std::string command_help(const CommandDoc& command) {
  std::string out;
  append_synopsis(out, command);
  out += "\n" + std::string(command.summary) + "\n";
  if (!command.options.empty()) {
    out += "\n";
    append_options(out, command.options);
  }
  for (const char* p : command.paragraphs) {
    out += "\n";
    append_wrapped(out, p, 0, 0, kWidth);
  }
  if (command.name == std::string_view("push")) {
    out += "\nexit codes:\n";
    for (const auto& [code, meaning] : kManual.exit_codes) out += std::string("  ") + code + "  " + meaning + "\n";
  }
  return out;
}

}  // namespace courier::cli
