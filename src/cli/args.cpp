// args.cpp — command-line parsing for `git-courier`.
#include "cli/args.hpp"
#include "cli/refspec.hpp"
#include "state/state_url.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <utility>

namespace courier::cli {

namespace {

// --deadline: a duration no longer than the 24 h limit.
Result<std::chrono::milliseconds> parse_deadline(const std::string& v) {
  auto d = parse_duration(v);
  if (!d) return tl::unexpected(Error{Errc::invalid_argument, "--deadline: " + d.error().message});
  if (*d > kMaxDeadline) {
    return fail(Errc::invalid_argument, "--deadline " + v + " is longer than the limit of 24 h (24h, 1440m, 86400s)");
  }
  return *d;
}

// --auth: none, credential, key:FILE, bearer:FILE or ssh-key:FILE, with a
// file name.
Result<void> check_auth_spelling(const std::string& auth) {
  if (auth != "none" && auth != "credential" && auth.rfind("key:", 0) != 0 && auth.rfind("bearer:", 0) != 0 &&
      auth.rfind("ssh-key:", 0) != 0) {
    return fail(Errc::invalid_argument,
                "--auth must be none, credential, key:FILE, bearer:FILE or ssh-key:FILE (got '" + auth + "')");
  }
  if (auth == "key:" || auth == "bearer:" || auth == "ssh-key:") {
    return fail(Errc::invalid_argument, "--auth " + auth + " needs a file name");
  }
  return {};
}

}  // namespace

namespace {

// One option being read: its name, and its value either inline
// ("--flag=value") or as the next argument.
class OptionReader {
 public:
  OptionReader(const std::vector<std::string>& args, std::size_t& i) : args_(args), i_(i), flag_(args[i]) {
    if (flag_.rfind("--", 0) == 0) {
      if (auto eq = flag_.find('='); eq != std::string::npos) {
        inline_value_ = flag_.substr(eq + 1);
        flag_ = flag_.substr(0, eq);
      }
    }
  }
  const std::string& flag() const { return flag_; }

  // The value. Errors: invalid_argument (none given).
  Result<std::string> value() {
    if (inline_value_) return *inline_value_;
    if (i_ + 1 >= args_.size()) return fail(Errc::invalid_argument, "option '" + flag_ + "' needs a value");
    return args_[++i_];
  }
  // A non-empty value into dst. Errors: invalid_argument.
  Result<void> set(std::string& dst) {
    auto v = value();
    if (!v) return tl::unexpected(v.error());
    if (v->empty()) return fail(Errc::invalid_argument, "option '" + flag_ + "' needs a non-empty value");
    dst = *v;
    return {};
  }
  Result<void> set(std::optional<std::string>& dst) {
    std::string tmp;
    if (auto r = set(tmp); !r) return r;
    dst = tmp;
    return {};
  }
  // Whether a value was given inline ("--flag=value").
  bool has_inline_value() const { return inline_value_.has_value(); }
  // A switch: true into dst. Errors: invalid_argument (a value was given).
  Result<void> set_switch(bool& dst) {
    if (inline_value_) return fail(Errc::invalid_argument, "option '" + flag_ + "' takes no value");
    dst = true;
    return {};
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t& i_;
  std::string flag_;
  std::optional<std::string> inline_value_;
};

// --force-with-lease: its value only inline, as git takes it (a bare one
// never takes the next argument). Errors: invalid_argument (given twice,
// an empty REF).
Result<void> parse_lease(OptionReader& o, PushArgs& out) {
  if (out.lease) return fail(Errc::invalid_argument, "--force-with-lease given twice: this command updates one ref");
  LeaseArg lease;
  if (o.has_inline_value()) {
    auto v = o.value();
    if (!v) return tl::unexpected(v.error());
    const std::size_t colon = v->find(':');
    lease.ref = v->substr(0, colon);
    if (colon != std::string::npos) lease.expect = v->substr(colon + 1);
    if (lease.ref->empty()) {
      return fail(Errc::invalid_argument, "--force-with-lease=" + *v + " names no ref (REF[:EXPECT])");
    }
  }
  out.lease = std::move(lease);
  return {};
}

// --host-id NAME: checked as a delivery id is. Errors: invalid_argument.
Result<void> set_host_id(OptionReader& o, std::optional<std::string>& host_id) {
  auto r = o.set(host_id);
  if (r && !wire::check_delivery_id(*host_id)) {
    return fail(Errc::invalid_argument, "--host-id: 1 to 128 of A-Z a-z 0-9 . _ : -");
  }
  return r;
}

// git's options that push many refs at once: what git would push.
const char* many_refs_flag(const std::string& flag) {
  if (flag == "--all" || flag == "--branches") return "every branch";
  if (flag == "--mirror") return "every ref, and delete the remote's refs that are not here";
  if (flag == "--tags") return "every tag as well";
  return nullptr;
}

// -o/--push-option: the value inline (--push-option=V, -oV is not read)
// or the next argument. An empty one clears the list, as git's. Errors:
// invalid_argument (no value).
Result<void> read_push_option(OptionReader& o, PushArgs& out) {
  auto v = o.value();
  if (!v) return tl::unexpected(v.error());
  out.push_options_given = true;
  if (v->empty()) {
    out.push_options.clear();
  } else {
    out.push_options.push_back(*v);
  }
  return {};
}

// Applies one option of `push` to out. Errors: invalid_argument (unknown
// option, stray argument, bad value).
Result<void> apply_push_option(OptionReader& o, PushArgs& out) {
  const std::string& flag = o.flag();
  if (flag == "--repo") return o.set(out.repo);
  if (flag == "--remote") return o.set(out.remote);
  if (flag == "--ref") return o.set(out.ref);
  if (flag == "--oid") return o.set(out.oid);
  if (flag == "--rev") return o.set(out.rev);
  if (flag == "--ca-file") return o.set(out.ca_file);
  if (flag == "--known-hosts") return o.set(out.known_hosts);
  if (flag == "--ssh-passphrase-file") return o.set(out.ssh_passphrase_file);
  if (flag == "--lane-dir") return o.set(out.lane_dir);
  if (flag == "--allow-http-loopback") return o.set_switch(out.allow_http_loopback);
  if (flag == "--json") return o.set_switch(out.json);
  if (flag == "--quiet" || flag == "-q") return o.set_switch(out.quiet);
  if (flag == "--verbose" || flag == "-v") return o.set_switch(out.verbose);
  if (flag == "--progress" || flag == "--no-progress") {
    bool on = false;
    if (auto r = o.set_switch(on); !r) return r;
    out.progress = flag == "--progress";
    return {};
  }
  if (flag == "--via") return o.set(out.via);
  if (flag == "--credential") return o.set(out.credential);
  if (flag == "--journal") return o.set(out.journal);
  if (flag == "--no-journal") return o.set_switch(out.no_journal);
  if (flag == "--state") return o.set(out.state);
  if (flag == "--host-id") return set_host_id(o, out.host_id);
  if (flag == "--read-back") return o.set_switch(out.read_back);
  if (flag == "--force" || flag == "-f") return o.set_switch(out.force);
  if (flag == "--delete" || flag == "-d") return o.set_switch(out.delete_refs);
  if (flag == "--atomic" || flag == "--no-atomic") {
    bool on = false;
    if (auto r = o.set_switch(on); !r) return r;
    out.atomic = flag == "--atomic";
    return {};
  }
  if (flag == "--push-option" || flag == "-o") return read_push_option(o, out);
  if (flag == "--expect-old") return o.set(out.expect_old);
  if (flag == "--force-with-lease") return parse_lease(o, out);
  if (flag == "--delivery-id") {
    auto r = o.set(out.delivery_id);
    return r ? check_delivery_id(*out.delivery_id) : r;
  }
  if (flag == "--deadline") {
    auto v = o.value();
    if (!v) return tl::unexpected(v.error());
    auto d = parse_deadline(*v);
    if (!d) return tl::unexpected(d.error());
    out.deadline = *d;
    return {};
  }
  if (flag == "--auth") {
    auto r = o.set(out.auth);
    return r ? check_auth_spelling(out.auth) : r;
  }
  if (flag == "--pack-engine") {
    auto r = o.set(out.pack_engine);
    if (r && out.pack_engine != "auto" && out.pack_engine != "libgit2" && out.pack_engine != "git") {
      return fail(Errc::invalid_argument, "--pack-engine must be auto, libgit2 or git (got '" + out.pack_engine + "')");
    }
    return r;
  }
  if (const char* what = many_refs_flag(flag)) {
    return fail(Errc::invalid_argument, flag + ": git would push " + what +
                                            "; git-courier delivers the refs it is given by name: name each (e.g. git "
                                            "courier push origin main v1.0)");
  }
  if (flag.rfind('-', 0) == 0) return fail(Errc::invalid_argument, "unknown option '" + flag + "' for push");
  out.positional.push_back(flag);
  return {};
}

}  // namespace

const char* service_config_flag_reason(const std::string& flag) {
  static const std::pair<const char*, const char*> kReasons[] = {
      {"--auth",
       "the service holds the credentials (serve --credential NAME=...): name one of them with --credential NAME"},
      {"--ca-file", "trust is the service's configuration (serve --ca-file)"},
      {"--known-hosts", "the host keys the service trusts are its configuration (serve --known-hosts)"},
      {"--ssh-passphrase-file", "the service holds the keys (serve --credential NAME=ssh-key:FILE)"},
      {"--allow-http-loopback",
       "which remotes may be plain http:// is the service's configuration "
       "(serve --allow-http-loopback)"},
      {"--lane-dir", "the service keeps the lanes (serve --lane-dir)"},
      {"--journal", "the service keeps the journal (serve --journal); --delivery-id is remembered there"},
      {"--no-journal", "the service keeps the journal, always (serve --journal)"},
      {"--state", "the service keeps the journal (serve --state)"},
      {"--host-id", "the service names its host (serve --host-id)"},
      {"--pack-engine", "the service chooses the pack engine"},
      {"--read-back",
       "a read-back needs the remote's credentials, which the service holds: GET "
       "/v1/deliveries/ID shows the outcome, and git ls-remote reads the ref"},
      {"--force-with-lease",
       "the lease is read from this repository's remote-tracking refs: give the id it names "
       "as --expect-old OID (git rev-parse REMOTE/BRANCH)"},
  };
  for (const auto& [name, why] : kReasons) {
    if (flag == name) return why;
  }
  return nullptr;
}

namespace {

// --state: refused with --journal or --no-journal (two answers to one
// question); `sqlite:FILE` becomes --journal FILE, so that only a
// PostgreSQL state remains in `state`. Errors: invalid_argument.
Result<void> read_state(std::optional<std::string>& state, std::optional<std::string>& journal, bool no_journal) {
  if (!state) return {};
  if (journal || no_journal) {
    return fail(Errc::invalid_argument,
                std::string("give at most one of --state and ") +
                    (journal ? "--journal (--state sqlite:FILE is --journal FILE)" : "--no-journal"));
  }
  auto url = state::parse_state_url(*state);
  if (!url) return tl::unexpected(url.error());
  if (url->kind == state::StateUrl::Kind::sqlite) {
    journal = url->path;
    state.reset();
  }
  return {};
}

// --via and --credential: a client of the service configures nothing that is
// the service's. Errors: invalid_argument naming the flag and why.
Result<void> check_via(const PushArgs& out) {
  if (out.credential && !out.via) {
    return fail(Errc::invalid_argument,
                "--credential names one of the service's credentials: it needs --via SOCKET (without it, --auth)");
  }
  if (out.via && !out.local_flags.empty()) {
    const std::string& flag = out.local_flags.front();
    return fail(Errc::invalid_argument, flag + " cannot be given with --via: " + service_config_flag_reason(flag));
  }
  return {};
}

// <remote> and <refspec> beside the long options: each said one way.
Result<void> check_positional(const PushArgs& out) {
  const auto& words = out.positional;
  if (!words.empty() && !out.remote.empty()) {
    return fail(Errc::invalid_argument,
                "the remote is given twice ('" + words[0] + "' and --remote " + out.remote + "): give it once");
  }
  if (words.size() >= 2 && (!out.ref.empty() || out.rev || out.oid)) {
    return fail(Errc::invalid_argument, "refspec '" + words[1] +
                                            "' and --ref/--rev/--oid: say what to push one way (SRC:DST, or --rev "
                                            "REV --ref REF)");
  }
  // A refspec's own words are judged here, before any library is loaded
  // (X-START1); what it names is resolved against the repository later.
  for (std::size_t i = 1; i < words.size(); ++i) {
    auto spec = out.delete_refs ? parse_delete_refspec(words[i]) : parse_refspec(words[i]);
    if (!spec) return tl::unexpected(spec.error());
  }
  if (out.delete_refs && words.size() < 2)
    return fail(Errc::invalid_argument, "--delete doesn't make sense without any refs");
  if (out.oid && out.rev) return fail(Errc::invalid_argument, "give at most one of --oid and --rev");
  if (!out.ref.empty() && !out.oid && !out.rev) {
    return fail(Errc::invalid_argument,
                "--ref " + out.ref + " needs --rev REV or --oid OID (or a refspec: git courier push REMOTE SRC:DST)");
  }
  return {};
}

}  // namespace

Result<PushArgs> parse_push_args(const std::vector<std::string>& args) {
  PushArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader option(args, i);
    if (option.flag() == "--help" || option.flag() == "-h") {
      out.help = true;
      return out;
    }
    if (option.flag() == "--version" || option.flag() == "-V") {
      out.version = true;
      return out;
    }
    if (auto r = apply_push_option(option, out); !r) return tl::unexpected(r.error());
    if (service_config_flag_reason(option.flag())) out.local_flags.push_back(option.flag());
  }
  if (auto ok = check_via(out); !ok) return tl::unexpected(ok.error());
  if (auto ok = check_positional(out); !ok) return tl::unexpected(ok.error());
  if (static_cast<int>(out.force) + static_cast<int>(out.lease.has_value()) +
          static_cast<int>(out.expect_old.has_value()) >
      1) {
    return fail(Errc::invalid_argument,
                "give at most one of --force, --force-with-lease and --expect-old (a lease or an expected id is "
                "already a force when it holds; --force would ignore it)");
  }
  if (out.no_journal && out.journal)
    return fail(Errc::invalid_argument, "give at most one of --journal and --no-journal");
  if (auto ok = read_state(out.state, out.journal, out.no_journal); !ok) return tl::unexpected(ok.error());
  if (out.no_journal && out.delivery_id) {
    return fail(Errc::invalid_argument, "--delivery-id needs the journal (it is what remembers the id)");
  }
  return out;
}

namespace {

// Applies one option of log, show or recover. Errors: invalid_argument.
Result<void> apply_journal_option(const std::string& command, OptionReader& o, JournalArgs& out) {
  const std::string& flag = o.flag();
  if (flag == "--journal") return o.set(out.journal);
  if (flag == "--state") return o.set(out.state);
  if (flag == "--json") return o.set_switch(out.json);
  if (command == "log" && flag == "--limit") {
    auto v = o.value();
    if (!v) return tl::unexpected(v.error());
    if (v->empty() || v->size() > 6 || !std::all_of(v->begin(), v->end(), [](char c) { return std::isdigit(c); }) ||
        std::stoul(*v) == 0) {
      return fail(Errc::invalid_argument, "--limit must be a whole number from 1 to 999999");
    }
    out.limit = std::stoul(*v);
    return {};
  }
  if (command == "recover") {
    if (flag == "--lane-dir") return o.set(out.lane_dir);
    if (flag == "--host-id") return set_host_id(o, out.host_id);
    if (flag == "--ca-file") return o.set(out.ca_file);
    if (flag == "--allow-http-loopback") return o.set_switch(out.allow_http_loopback);
    if (flag == "--auth") {
      auto r = o.set(out.auth);
      return r ? check_auth_spelling(out.auth) : r;
    }
  }
  if (flag.rfind('-', 0) == 0) return fail(Errc::invalid_argument, "unknown option '" + flag + "' for " + command);
  if (command == "show" && !out.id) {
    if (auto ok = check_delivery_id(flag); !ok) return ok;
    out.id = flag;
    return {};
  }
  return fail(Errc::invalid_argument, "unexpected argument '" + flag + "' for " + command);
}

}  // namespace

Result<JournalArgs> parse_journal_args(const std::string& command, const std::vector<std::string>& args) {
  JournalArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader option(args, i);
    if (option.flag() == "--help" || option.flag() == "-h") {
      out.help = true;
      return out;
    }
    if (auto r = apply_journal_option(command, option, out); !r) return tl::unexpected(r.error());
  }
  if (command == "show" && !out.id) return fail(Errc::invalid_argument, "show needs a delivery id");
  if (auto ok = read_state(out.state, out.journal, false); !ok) return tl::unexpected(ok.error());
  return out;
}

Result<KeygenArgs> parse_keygen_args(const std::vector<std::string>& args) {
  KeygenArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      out.help = true;
      return out;
    }
    if (args[i] == "--out") {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        return fail(Errc::invalid_argument, "option '--out' needs a value");
      }
      out.out = args[++i];
    } else if (args[i].rfind("--out=", 0) == 0) {
      out.out = args[i].substr(6);
    } else {
      return fail(Errc::invalid_argument, "unknown option '" + args[i] + "' for keygen");
    }
  }
  if (out.out.empty()) return fail(Errc::invalid_argument, "missing required option --out");
  return out;
}

}  // namespace courier::cli
