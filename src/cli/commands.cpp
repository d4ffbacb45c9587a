// commands.cpp — `git-courier` subcommands: help, version, push, serve,
// keygen, the journal commands, and the hidden generators of the man page and completion.
#include "cli/commands.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "auth/ed25519_minter.hpp"
#include "cli/args.hpp"
#include "cli/journal_cmd.hpp"
#include "state/state_url.hpp"
#include "cli/output.hpp"
#include "cli/push.hpp"
#include "cli/push_line.hpp"
#include "cli/usage.hpp"
#include "cli/version.hpp"
#include "service/routes.hpp"
#include "service/serve.hpp"
#include "service/service_options.hpp"
#include "sys/lazy_library.hpp"
#include "sys/process.hpp"

namespace courier::cli {

namespace {

void usage_error(const std::string& message, const char* hint) {
  std::fprintf(stderr, "git-courier: %s\n%s", message.c_str(), hint);
}

// The help of a command the table knows (push, keygen, log, show, recover).
std::string help_of(const char* name) {
  const CommandDoc* c = find_command(name);
  return c ? command_help(*c) : help_text();
}

// The hidden commands the build runs to write the man page and the
// completion from the same table as --help (CMakeLists.txt), and the one
// that prints the service's route table.
std::optional<int> run_generator(const std::string& cmd, const std::vector<std::string>& rest) {
  if (cmd == "__man" && rest.empty()) {
    std::fputs(man_page(COURIER_VERSION).c_str(), stdout);
    return kExitOk;
  }
  if (cmd == "__completion" && rest.size() == 1 && rest[0] == "bash") {
    std::fputs(bash_completion().c_str(), stdout);
    return kExitOk;
  }
  // The service's route table, for the API document's check
  // (scripts/check-api): what the router serves, printed by the router's
  // own table.
  if (cmd == "__service-routes" && rest.empty()) {
    std::printf("%s\n", service::routes_json().dump(2).c_str());
    return kExitOk;
  }
  return std::nullopt;
}

// `help`, `help COMMAND`, `--help`, `version`, `--version`, `-V`.
std::optional<int> run_help_or_version(const std::string& cmd, const std::vector<std::string>& rest) {
  if (cmd == "--version" || cmd == "-V" || cmd == "version") {
    std::fputs(version_text().c_str(), stdout);
    return kExitOk;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    if (rest.empty() || rest[0] == "--help" || rest[0] == "-h") {
      std::fputs(help_text().c_str(), stdout);
      return kExitOk;
    }
    const CommandDoc* c = rest.size() == 1 ? find_command(rest[0]) : nullptr;
    if (c == nullptr) {
      usage_error("no help for '" + rest[0] + (rest.size() == 1 ? "'" : " ...'") + ": not a command",
                  help_text().c_str());
      return kExitUsage;
    }
    std::fputs(command_help(*c).c_str(), stdout);
    return kExitOk;
  }
  return std::nullopt;
}

// A command's arguments could not be read: the message on stderr and, when
// --json is among them (a script waits for one object on stdout), the
// usage object too, so that it always gets one.
int command_usage_error(const std::vector<std::string>& args, const std::string& command, const std::string& message,
                        const char* hint) {
  usage_error(message, hint);
  for (const auto& arg : args) {
    if (arg == "--json") {
      std::printf("%s\n", json_usage(command + ": " + message).c_str());
      break;
    }
  }
  return kExitUsage;
}

// `serve`: its options (a usage error or --help loads no library), the
// journal's default, and the read-back recovery uses (no credential: a
// service's credentials are named per delivery).
int run_serve_command(const std::vector<std::string>& rest) {
  auto parsed = service::parse_service_options(rest);
  if (!parsed) {
    usage_error("serve: " + parsed.error().message, "see `git-courier serve --help`\n");
    return kExitUsage;
  }
  if (parsed->help) {
    std::fputs(help_of("serve").c_str(), stdout);
    return kExitOk;
  }
  // --state sqlite:FILE is --journal FILE; a PostgreSQL state is the service's to open.
  if (parsed->state) {
    auto url = state::parse_state_url(*parsed->state);
    if (!url) {
      usage_error("serve: " + url.error().message, "");
      return kExitUsage;
    }
    if (url->kind == state::StateUrl::Kind::sqlite) {
      parsed->journal = url->path;
      parsed->state.reset();
    }
  }
  // The same default journal as push, log and recover (rule S1): `log`
  // shows the service's deliveries. A PostgreSQL state needs no file.
  Result<std::string> journal = parsed->journal ? Result<std::string>(*parsed->journal)
                                : parsed->state ? Result<std::string>(std::string())
                                                : default_journal_path();
  if (!journal) {
    usage_error("serve: " + journal.error().message, "");
    return kExitUsage;
  }
  return service::run_serve(*parsed, *journal,
                            make_read_back("none", parsed->ca_file, parsed->allow_http_loopback, std::nullopt));
}

// `-C DIR` before the command, as git takes it (repeatable; each relative
// to the one before; an empty DIR changes nothing). nullopt: done.
std::optional<int> change_directories(std::vector<std::string>& args) {
  std::size_t used = 0;
  while (used < args.size() && args[used] == "-C") {
    if (used + 1 >= args.size()) {
      usage_error("option '-C' needs a directory", "");
      return kExitUsage;
    }
    if (const std::string& dir = args[used + 1]; !dir.empty()) {
      if (auto ok = sys::change_directory(dir); !ok) {
        usage_error(ok.error().message, "");
        return kExitUsage;
      }
    }
    used += 2;
  }
  args.erase(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(used));
  return std::nullopt;
}

// `push`'s git-style words settled against the repository (libgit2 is
// loaded first): the arguments, or the exit code of the error said.
tl::expected<PushArgs, int> settle_push(const PushArgs& parsed) {
  // The parent reads the repository (libgit2) before anything else of the
  // delivery; the journal, a key and the read-back load their own libraries.
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::git2); !lib) {
    std::fprintf(stderr, "git-courier: push: %s\n", lib.error().message.c_str());
    return tl::unexpected(kExitFailed);
  }
  auto settled = settle_push_line(parsed);
  if (!settled) {
    // git's messages run over several lines: said as they are, after "push: ".
    usage_error("push: " + settled.error().message, "");
    if (parsed.json) std::printf("%s\n", json_usage("push: " + settled.error().message).c_str());
    return tl::unexpected(kExitUsage);
  }
  return *settled;
}

// `push`: the delivery, its words settled by settle_push once its child is
// on its way (run_push).
int run_push_command(const PushArgs& parsed) { return run_push(parsed, settle_push); }

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto code = change_directories(args)) return *code;
  if (args.empty()) {
    usage_error("no command given", help_text().c_str());
    return kExitUsage;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (auto code = run_help_or_version(cmd, rest)) return *code;
  if (auto code = run_generator(cmd, rest)) return *code;
  if (cmd == "push") {
    auto parsed = parse_push_args(rest);
    if (!parsed) return command_usage_error(rest, cmd, parsed.error().message, "see `git-courier push --help`\n");
    if (parsed->help) {
      std::fputs(help_of("push").c_str(), stdout);
      return kExitOk;
    }
    if (parsed->version) {
      std::fputs(version_text().c_str(), stdout);
      return kExitOk;
    }
    return run_push_command(*parsed);
  }
  if (cmd == "log" || cmd == "show" || cmd == "recover") {
    auto parsed = parse_journal_args(cmd, rest);
    if (!parsed) return command_usage_error(rest, cmd, parsed.error().message, help_of(cmd.c_str()).c_str());
    if (parsed->help) {
      std::fputs(help_of(cmd.c_str()).c_str(), stdout);
      return kExitOk;
    }
    if (cmd == "log") return run_log(*parsed);
    if (cmd == "show") return run_show(*parsed);
    return run_recover(*parsed);
  }
  if (cmd == "serve") return run_serve_command(rest);
  if (cmd == "keygen") {
    auto parsed = parse_keygen_args(rest);
    if (!parsed) {
      usage_error(parsed.error().message, help_of("keygen").c_str());
      return kExitUsage;
    }
    if (parsed->help) {
      std::fputs(help_of("keygen").c_str(), stdout);
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
  usage_error("unknown command '" + cmd + "'", help_text().c_str());
  return kExitUsage;
}

}  // namespace courier::cli
