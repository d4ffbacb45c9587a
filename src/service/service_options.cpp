// service_options.cpp — serve's flags and its --config file.
#include "service/service_options.hpp"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "sys/service_socket.hpp"
#include "sys/small_file.hpp"
#include "sys/state_paths.hpp"
#include "wire/grammar.hpp"
#include "wire/json.hpp"
#include "wire/url.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

const std::set<std::string> kSwitches = {"allow-http-loopback", "help"};
const std::set<std::string> kValued = {
    "socket",        "listen",     "api-token-file",   "workers",    "warm",       "journal",
    "lane-dir",      "repo-root",  "credential",       "allow-uid",  "allow-gid",  "max-queued",
    "drain-timeout", "ca-file",    "config",           "state",      "host-id",    "lease-ttl",
    "lease-margin",  "stop-bound", "credential-scope", "state-file", "known-hosts"};
const std::set<std::string> kRepeatable = {"credential", "credential-scope", "allow-uid", "allow-gid"};

Result<std::uint64_t> count(const std::string& flag, const std::string& v, std::uint64_t min, std::uint64_t max) {
  if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos) {
    return fail(Errc::invalid_argument, "--" + flag + " needs a number, not '" + v + "'");
  }
  const std::uint64_t n = std::stoull(v);
  if (n < min || n > max) {
    return fail(Errc::invalid_argument,
                "--" + flag + " must be " + std::to_string(min) + " to " + std::to_string(max) + ", not " + v);
  }
  return n;
}

// One flag's value applied (given: the flags seen on the command line, so
// that the config file does not override them).
Result<void> apply(ServiceOptions& o, const std::string& flag, const std::string& v) {
  if (flag == "socket") o.socket = v;
  if (flag == "listen") o.listen = v;
  if (flag == "api-token-file") o.api_token_file = v;
  if (flag == "journal") o.journal = v;
  if (flag == "state") o.state = v;
  if (flag == "state-file") o.state_file = v;
  if (flag == "host-id") {
    if (!wire::check_delivery_id(v)) return fail(Errc::invalid_argument, "--host-id: 1 to 128 of A-Z a-z 0-9 . _ : -");
    o.host_id = v;
  }
  if (flag == "lane-dir") o.lane_dir = v;
  if (flag == "repo-root") o.repo_root = v;
  if (flag == "ca-file") o.ca_file = v;
  if (flag == "known-hosts") o.known_hosts = v;
  if (flag == "config") o.config = v;
  if (flag == "workers" || flag == "warm" || flag == "max-queued" || flag == "allow-uid" || flag == "allow-gid") {
    const bool id = flag == "allow-uid" || flag == "allow-gid";
    auto n = count(flag, v, flag == "workers" || flag == "max-queued" ? 1 : 0,
                   id ? 4294967294ULL : (flag == "max-queued" ? 1'000'000 : 256));
    if (!n) return tl::unexpected(n.error());
    if (flag == "workers") o.workers = *n;
    if (flag == "warm") o.warm = *n;
    if (flag == "max-queued") o.max_queued = *n;
    if (flag == "allow-uid") o.allow_uids.push_back(static_cast<std::uint32_t>(*n));
    if (flag == "allow-gid") o.allow_gids.push_back(static_cast<std::uint32_t>(*n));
  }
  if (flag == "drain-timeout") {
    auto d = wire::parse_duration(v);
    if (!d) return fail(Errc::invalid_argument, "--drain-timeout: " + d.error().message);
    if (*d > wire::kMaxDeadline) return fail(Errc::invalid_argument, "--drain-timeout is longer than 24 h");
    o.drain_timeout = *d;
  }
  if (flag == "lease-ttl" || flag == "lease-margin" || flag == "stop-bound") {
    auto d = wire::parse_duration(v);
    if (!d) return fail(Errc::invalid_argument, "--" + flag + ": " + d.error().message);
    if (*d > wire::kMaxDeadline) return fail(Errc::invalid_argument, "--" + flag + " is longer than 24 h");
    if (flag == "lease-ttl") o.lease_ttl = *d;
    if (flag == "lease-margin") o.lease_margin = *d;
    if (flag == "stop-bound") o.stop_bound = *d;
  }
  if (flag == "credential") {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      return fail(Errc::invalid_argument,
                  "--credential is NAME=key:FILE, NAME=bearer:FILE, NAME=ssh-key:FILE or NAME=credential");
    }
    const std::string name = v.substr(0, eq);
    if (!wire::check_delivery_id(name)) {
      return fail(Errc::invalid_argument, "--credential: a name is 1 to 128 of A-Z a-z 0-9 . _ : -");
    }
    if (o.credentials.count(name) != 0) return fail(Errc::invalid_argument, "--credential " + name + " given twice");
    o.credentials[name] = v.substr(eq + 1);
  }
  if (flag == "credential-scope") {
    // NAME=URL; the URL is checked with the credentials (credential_scope.hpp).
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      return fail(Errc::invalid_argument, "--credential-scope is NAME=URL (a remote or a URL prefix)");
    }
    o.credential_scopes[v.substr(0, eq)].push_back(v.substr(eq + 1));
  }
  return {};
}

// The state URL kept in a file (--state-file): a password in it stays out
// of every process list. Held to the rule of a private key: a regular file
// (no link, FIFO or device), at most 64 KiB, that neither its group nor
// others may read or write. One line; its trailing whitespace is not part of
// the URL. Errors: invalid_argument naming the file, never its contents.
Result<std::string> read_state_file(const std::string& path) {
  auto file = sys::read_small_regular_file(path, sys::kMaxSecretFile);
  if (!file) return fail(Errc::invalid_argument, "--state-file " + path + ": " + file.error().message);
  if ((file->mode & 077) != 0) {
    return fail(Errc::invalid_argument, "--state-file " + path +
                                            " may be read or written by its group or others (it may hold the "
                                            "database's password): chmod 600 " +
                                            path);
  }
  std::string url = std::move(file->bytes);
  while (!url.empty() && (url.back() == '\n' || url.back() == '\r' || url.back() == ' ' || url.back() == '\t')) {
    url.pop_back();
  }
  if (url.empty()) return fail(Errc::invalid_argument, "--state-file " + path + " is empty");
  return url;
}

// --state and --state-file, one answer: the URL, and a warning when a
// password came on the command line (every local user can read it in ps
// for the service's life).
Result<void> settle_state(ServiceOptions& o, bool state_in_argv) {
  if (o.state_file) {
    if (o.state) return fail(Errc::invalid_argument, "give at most one of --state and --state-file");
    auto url = read_state_file(*o.state_file);
    if (!url) return tl::unexpected(url.error());
    o.state = std::move(*url);
  } else if (o.state && state_in_argv && o.state->find("://") != std::string::npos &&
             wire::carries_password(*o.state)) {
    o.warnings.push_back(
        "the --state URL on the command line carries a password, which every local user can read in the process "
        "list for as long as the service runs: give it in a file of mode 0600 with --state-file FILE, or leave it "
        "out of the URL and let libpq read it from PGPASSFILE (~/.pgpass) or PGPASSWORD");
  }
  return {};
}

// The flags as (name, value) pairs, in order.
Result<std::vector<std::pair<std::string, std::string>>> read_flags(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "-h") a = "--help";
    if (a.rfind("--", 0) != 0) return fail(Errc::invalid_argument, "serve: unexpected argument '" + a + "'");
    std::string flag = a.substr(2);
    std::optional<std::string> value;
    if (const auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (kSwitches.count(flag) != 0) {
      if (value) return fail(Errc::invalid_argument, "--" + flag + " takes no value");
      out.emplace_back(flag, "");
      continue;
    }
    if (kValued.count(flag) == 0) return fail(Errc::invalid_argument, "serve: unknown option '" + a + "'");
    if (!value) {
      if (i + 1 >= args.size()) return fail(Errc::invalid_argument, "--" + flag + " needs a value");
      value = args[++i];
    }
    out.emplace_back(flag, *value);
  }
  return out;
}

// The config file's keys as flags (a key's list: one flag per element).
Result<std::vector<std::pair<std::string, std::string>>> read_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(Errc::invalid_argument, "--config " + path + ": cannot be read");
  // At most one byte past the cap is read: the bounded reader refuses more.
  std::string contents(wire::kMaxJsonBytes + 1, '\0');
  in.read(contents.data(), static_cast<std::streamsize>(contents.size()));
  contents.resize(static_cast<std::size_t>(in.gcount()));
  auto parsed = wire::parse_json(contents, "--config " + path);
  if (!parsed) return fail(Errc::invalid_argument, parsed.error().message);
  const json& j = *parsed;
  if (!j.is_object()) return fail(Errc::invalid_argument, "--config " + path + ": not a JSON object");
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const bool known = kValued.count(key) != 0 || kSwitches.count(key) != 0;
    if (!known || key == "config" || key == "help") {
      return fail(Errc::invalid_argument, "--config " + path + ": unknown key \"" + key + "\"");
    }
    auto text = [&](const json& v) -> Result<std::string> {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
      return fail(Errc::invalid_argument, "--config " + path + ": \"" + key + "\" must be a string or a number");
    };
    if (kSwitches.count(key) != 0) {
      if (!it->is_boolean())
        return fail(Errc::invalid_argument, "--config " + path + ": \"" + key + "\" is true or false");
      if (it->get<bool>()) out.emplace_back(key, "");
      continue;
    }
    if (kRepeatable.count(key) != 0 && it->is_array()) {
      for (const auto& v : *it) {
        auto t = text(v);
        if (!t) return tl::unexpected(t.error());
        out.emplace_back(key, *t);
      }
      continue;
    }
    auto t = text(*it);
    if (!t) return tl::unexpected(t.error());
    out.emplace_back(key, *t);
  }
  return out;
}

}  // namespace

Result<ServiceOptions> parse_service_options(const std::vector<std::string>& args) {
  auto flags = read_flags(args);
  if (!flags) return tl::unexpected(flags.error());
  ServiceOptions o;
  std::set<std::string> given;
  for (const auto& [flag, value] : *flags) {
    if (flag == "help") {
      o.help = true;
      return o;
    }
    if (flag == "allow-http-loopback") {
      o.allow_http_loopback = true;
    } else if (auto ok = apply(o, flag, value); !ok) {
      return tl::unexpected(ok.error());
    }
    if (kRepeatable.count(flag) == 0 && given.count(flag) != 0) {
      return fail(Errc::invalid_argument, "--" + flag + " given twice");
    }
    given.insert(flag);
  }
  if (o.config) {
    auto file = read_config(*o.config);
    if (!file) return tl::unexpected(file.error());
    for (const auto& [flag, value] : *file) {
      if (given.count(flag) != 0) continue;  // the command line wins
      if (flag == "allow-http-loopback") {
        o.allow_http_loopback = true;
      } else if (auto ok = apply(o, flag, value); !ok) {
        return fail(Errc::invalid_argument, "--config " + *o.config + ": " + ok.error().message);
      }
    }
  }
  if (o.repo_root.empty()) return fail(Errc::invalid_argument, "serve needs --repo-root DIR");
  if (auto settled = settle_state(o, given.count("state") != 0); !settled) return tl::unexpected(settled.error());
  if (o.state && o.journal) {
    return fail(Errc::invalid_argument,
                "give at most one of --state and --journal (--state sqlite:FILE is --journal FILE)");
  }
  if (o.listen && !o.api_token_file) return fail(Errc::invalid_argument, "--listen requires --api-token-file FILE");
  if (o.listen) {
    if (auto l = parse_listen(*o.listen); !l) return tl::unexpected(l.error());
  }
  return o;
}

Result<std::string> default_socket_path() {
  // Beside root's lanes, under the test root when the suites set one.
  if (sys::effective_uid() == 0) return sys::under_test_root("/run/git-courier/serve.sock");
  const char* run = std::getenv("XDG_RUNTIME_DIR");
  if (run == nullptr || *run != '/') {
    return fail(Errc::invalid_argument, "no default socket: XDG_RUNTIME_DIR is not set; give --socket PATH");
  }
  return std::string(run) + "/git-courier/serve.sock";
}

Result<std::pair<std::string, std::uint16_t>> parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return fail(Errc::invalid_argument, "--listen is 127.0.0.1:PORT, not '" + text + "'");
  }
  // Port 0: a free port the kernel picks, said in the log ("tcp_listening").
  auto port = count("listen", text.substr(colon + 1), 0, 65535);
  if (!port) return tl::unexpected(port.error());
  const std::string host = text.substr(0, colon);
  if (host.rfind("127.", 0) != 0) {
    return fail(Errc::invalid_argument, "--listen accepts a loopback address only (127.0.0.1), not " + host);
  }
  return std::make_pair(host, static_cast<std::uint16_t>(*port));
}

}  // namespace courier::service
