// credential_minter.cpp — git credential helpers, run in the parent.
#include "auth/credential_minter.hpp"

#include <signal.h>

#include <filesystem>
#include <sstream>

#include "auth/crypto.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace courier::auth {

namespace {

constexpr std::size_t kMaxInput = 16 * 1024;
constexpr std::size_t kMaxOutput = 64 * 1024;

// git credential's format is line-based: a value with a newline or NUL
// would be a second field.
bool credential_safe(std::string_view v) {
  return v.find_first_of(std::string_view("\n\0", 2)) == std::string_view::npos;
}

std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// Reads what is available on a non-blocking pipe; false at end of file.
Result<bool> drain(int fd, std::string& into) {
  char buf[4096];
  for (;;) {
    auto r = sys::read_nonblocking(fd, buf, sizeof buf);
    if (!r) return tl::unexpected(r.error());
    if (r->status == sys::ReadStatus::eof) return false;
    if (r->status == sys::ReadStatus::would_block) return true;
    // Beyond the cap the bytes are read and dropped, so the helper never
    // blocks on a full pipe.
    const std::size_t room = into.size() < kMaxOutput ? kMaxOutput - into.size() : 0;
    into.append(buf, std::min(room, r->bytes));
  }
}

// `git [-C dir] args...` in `env`; with a directory, -C finds the
// repository from it only when nothing in the environment names another.
sys::SpawnSpec git_spec(const std::string& git_program, const std::vector<std::string>& args,
                        const std::vector<std::string>& env, const std::string& dir) {
  sys::SpawnSpec spec;
  spec.exec_path = git_program;
  spec.argv = {"git"};
  if (dir.empty()) {
    spec.env = env;
  } else {
    spec.argv.insert(spec.argv.end(), {"-C", dir});
    for (const auto& e : env) {
      if (e.rfind("GIT_DIR=", 0) != 0 && e.rfind("GIT_WORK_TREE=", 0) != 0 && e.rfind("GIT_COMMON_DIR=", 0) != 0) {
        spec.env.push_back(e);
      }
    }
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return spec;
}

}  // namespace

// ---- the query ---------------------------------------------------------------------

std::string CredentialQuery::lines() const {
  std::string out = "protocol=" + protocol + "\nhost=" + host + "\n";
  if (!path.empty()) out += "path=" + path + "\n";
  if (username) out += "username=" + *username + "\n";
  return out;
}

Result<CredentialQuery> credential_query(std::string_view remote) {
  auto url = wire::parse_url(remote);
  if (!url) return tl::unexpected(url.error());
  if (url->query) return fail(Errc::invalid_argument, "a remote URL has no query");
  CredentialQuery q;
  q.protocol = url->scheme;
  // git credential's host is host[:port] with the default port left out:
  // exactly what follows "scheme://" in the origin.
  q.host = url->origin().substr(url->scheme.size() + 3);
  q.path = wire::percent_decode(std::string_view(url->path).substr(1));
  if (url->userinfo) {
    const std::string_view userinfo = *url->userinfo;
    q.username = wire::percent_decode(userinfo.substr(0, userinfo.find(':')));
  }
  if (!credential_safe(q.host) || !credential_safe(q.path) || (q.username && !credential_safe(*q.username))) {
    return fail(Errc::invalid_argument, "the remote URL decodes to a newline or NUL, which git credential refuses");
  }
  return q;
}

// ---- running git credential ---------------------------------------------------------

std::vector<std::string> credential_environment() {
  std::vector<std::string> env;
  for (const std::string& entry : sys::environment()) {
    if (entry.rfind("GIT_TERMINAL_PROMPT=", 0) == 0) continue;
    env.push_back(entry);
  }
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  return env;
}

Result<std::string> find_git(const std::vector<std::string>& env) {
  std::string path = "/usr/bin:/bin";
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  return sys::find_on_path("git", path);
}

Result<GitCredentialRun> run_git_credential(const std::string& git_program, const std::string& action,
                                            const std::string& input, const std::vector<std::string>& env,
                                            sys::MonoNs until, const std::string& dir) {
  return run_git_in(git_program, {"credential", action}, input, env, until, dir);
}

Result<GitCredentialRun> run_git_in(const std::string& git_program, const std::vector<std::string>& args,
                                    const std::string& input, const std::vector<std::string>& env, sys::MonoNs until,
                                    const std::string& dir) {
  std::string what = "git";
  for (const auto& a : args) what += " " + a;
  if (input.size() > kMaxInput) return fail(Errc::invalid_argument, "git credential input too large");
  auto piped = sys::spawn_piped(git_spec(git_program, args, env, dir));
  if (!piped) return tl::unexpected(piped.error());
  sys::Spawned* child = &piped->process;

  // Kills the helper's whole process group while its leader is still
  // unreaped (so the group id cannot have been reused), then reaps.
  auto kill_and_reap = [&] {
    (void)sys::signal_group(child->pid, SIGKILL);
    (void)sys::pidfd_signal(child->pidfd.get(), SIGKILL);
    (void)sys::reap(child->pidfd.get());
  };

  {
    // The input is far smaller than a pipe's buffer, so this write cannot
    // block; a helper that already exited makes it EPIPE, not a signal.
    sys::ScopedSigpipeBlock no_sigpipe;
    if (!input.empty()) (void)sys::write_all(piped->stdin_w.get(), input.data(), input.size());
    piped->stdin_w.reset();
  }

  GitCredentialRun run;
  // The helper's two outputs, drained the same way until each ends.
  struct Output {
    int fd;
    std::string* into;
    bool open = true;
  };
  Output outputs[] = {{piped->stdout_r.get(), &run.out}, {piped->stderr_r.get(), &run.err}};
  for (const auto& o : outputs) {
    if (auto nb = sys::set_nonblocking(o.fd); !nb) {
      kill_and_reap();
      return tl::unexpected(nb.error());
    }
  }
  for (;;) {
    // Waits on the leader's exit (its pidfd) and on its output. Helpers it
    // started may keep the pipes open after it exited (a cache daemon), so
    // the exit, not end-of-file, ends the conversation.
    std::vector<int> fds = {child->pidfd.get()};
    for (const auto& o : outputs) {
      if (o.open) fds.push_back(o.fd);
    }
    auto ready = sys::wait_readable_until(fds, until);
    if (!ready) {
      kill_and_reap();
      return tl::unexpected(ready.error());
    }
    if (ready->empty()) {
      kill_and_reap();
      return fail(Errc::invalid_value, what + " did not finish in time; it was killed");
    }
    bool exited = false;
    for (std::size_t i : *ready) {
      if (fds[i] == child->pidfd.get()) exited = true;
    }
    for (auto& o : outputs) {
      if (!o.open) continue;
      auto more = drain(o.fd, *o.into);
      if (!more) {
        kill_and_reap();
        return tl::unexpected(more.error());
      }
      o.open = *more;
    }
    if (exited) break;
  }
  auto status = sys::reap(child->pidfd.get());
  if (!status) return tl::unexpected(status.error());
  run.exit_code = status->code;
  return run;
}

// ---- the minter --------------------------------------------------------------------------

CredentialMinter::CredentialMinter(MintContext context, CredentialMinterOptions options)
    : context_(std::move(context)), options_(std::move(options)) {}

CredentialMinter::~CredentialMinter() {
  if (username_) wipe(*username_);
  if (password_) wipe(*password_);
}

bool CredentialMinter::has_credential() const {
  std::lock_guard<std::mutex> lock(mu_);
  return password_.has_value();
}

std::vector<std::string> CredentialMinter::environment() const {
  return options_.env ? *options_.env : credential_environment();
}

Result<std::string> CredentialMinter::git_program(const std::vector<std::string>& env) const {
  if (!options_.git_program.empty()) return options_.git_program;
  return find_git(env);
}

// git's own check of the repository's owner (safe.directory): `git
// credential` would skip a refused repository's configuration without a
// word, so the refusal is asked for first, by a command that reports it.
Result<void> CredentialMinter::choose_config_dir(const std::string& git, const std::vector<std::string>& env,
                                                 sys::MonoNs until) {
  if (config_dir_) return {};
  if (context_.repo.empty()) {
    config_dir_ = std::string();
    return {};
  }
  auto run = run_git_in(git, {"rev-parse", "--git-dir"}, "", env, until, context_.repo);
  if (!run) return tl::unexpected(run.error());
  if (run->exit_code == 0) {
    config_dir_ = context_.repo;
    return {};
  }
  const bool dubious = run->err.find("dubious ownership") != std::string::npos;
  if (!dubious || !options_.untrusted_repo_falls_back) {
    const std::string why = dubious ? first_line(run->err) : last_line(run->err);
    return fail(Errc::invalid_value, "git credential cannot use the configuration of " + context_.repo + ": " + why);
  }
  config_dir_ = std::string("/");
  if (options_.on_note) {
    options_.on_note("git refuses the repository " + context_.repo +
                     " (dubious ownership: it is owned by another user and not in safe.directory): its credential "
                     "helpers are not run; the credential comes from this process's own git configuration");
  }
  return {};
}

Result<void> CredentialMinter::fill(sys::MonoNs until) {
  auto query = credential_query(context_.remote);
  if (!query) return tl::unexpected(query.error());
  const std::vector<std::string> env = environment();
  auto git = git_program(env);
  if (!git) return tl::unexpected(git.error());
  if (auto chosen = choose_config_dir(*git, env, until); !chosen) return tl::unexpected(chosen.error());
  auto run = run_git_credential(*git, "fill", query->lines() + "\n", env, until, *config_dir_);
  if (!run) return tl::unexpected(run.error());
  if (run->exit_code != 0) {
    wipe(run->out);
    const std::string why = last_line(run->err);
    return fail(Errc::invalid_value, "git credential fill failed" + (why.empty() ? std::string() : ": " + why));
  }
  std::optional<std::string> user;
  std::optional<std::string> pass;
  std::istringstream lines(run->out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("username=", 0) == 0)
      user = line.substr(9);
    else if (line.rfind("password=", 0) == 0)
      pass = line.substr(9);
    wipe(line);
  }
  wipe(run->out);
  if (!pass) return fail(Errc::invalid_value, "git credential fill gave no password");
  if (!user) user = query->username.value_or("");
  // RFC 7617: the user-id of HTTP Basic cannot contain a colon.
  if (user->find(':') != std::string::npos) {
    wipe(*pass);
    return fail(Errc::invalid_value, "the credential's user name contains ':', which HTTP Basic cannot carry");
  }
  username_ = std::move(user);
  password_ = std::move(pass);
  return {};
}

Result<std::string> CredentialMinter::mint(const LegRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!password_) {
    if (auto filled = fill(request.context.deadline); !filled) return tl::unexpected(filled.error());
  }
  std::string pair = *username_ + ":" + *password_;
  std::string header = "Authorization: Basic " + base64_encode(pair);
  wipe(pair);
  return header;
}

Result<void> CredentialMinter::tell(const char* action) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!password_ || settled_) return {};
  settled_ = true;
  auto query = credential_query(context_.remote);
  if (!query) return tl::unexpected(query.error());
  query->username = *username_;
  const std::vector<std::string> env = environment();
  auto git = git_program(env);
  if (!git) return tl::unexpected(git.error());
  std::string input = query->lines() + "password=" + *password_ + "\n\n";
  // The same configuration as the fill's: the helper that gave the
  // credential is the one told about it.
  auto run = run_git_credential(*git, action, input, env, sys::mono_now_ns() + options_.settle_bound,
                                config_dir_.value_or(""));
  wipe(input);
  if (!run) return tl::unexpected(run.error());
  if (run->exit_code != 0) {
    return fail(Errc::invalid_value, std::string("git credential ") + action + " failed: " + last_line(run->err));
  }
  return {};
}

Result<void> CredentialMinter::approve() { return tell("approve"); }
Result<void> CredentialMinter::reject() { return tell("reject"); }
Result<void> CredentialMinter::settle(bool accepted) { return accepted ? approve() : reject(); }

}  // namespace courier::auth
