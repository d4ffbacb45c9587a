// args.cpp — command-line parsing for `git-courier`.
#include "cli/args.hpp"

#include <cctype>
#include <limits>

namespace courier::cli {

Result<std::chrono::milliseconds> parse_duration(const std::string& text) {
  auto bad = [&] {
    return fail(Errc::invalid_argument, "cannot parse duration '" + text +
                                            "': use a positive whole number with ms, s or m (e.g. 500ms, 150s, 2m)");
  };
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 9) return bad();
  const long long n = std::stoll(text.substr(0, i));
  const std::string unit = text.substr(i);
  long long ms = 0;
  if (unit == "ms") ms = n;
  else if (unit == "s") ms = n * 1000;
  else if (unit == "m") ms = n * 60'000;
  else return bad();
  if (ms <= 0) return bad();
  return std::chrono::milliseconds(ms);
}

namespace {

// --deadline: a duration no longer than the 24 h limit.
Result<std::chrono::milliseconds> parse_deadline(const std::string& v) {
  auto d = parse_duration(v);
  if (!d) return tl::unexpected(Error{Errc::invalid_argument, "--deadline: " + d.error().message});
  if (*d > kMaxDeadline) {
    return fail(Errc::invalid_argument, "--deadline " + v + " is longer than the limit of 24 h (1440m, 86400s)");
  }
  return *d;
}

// --auth: none, credential, key:FILE or bearer:FILE, with a file name.
Result<void> check_auth_spelling(const std::string& auth) {
  if (auth != "none" && auth != "credential" && auth.rfind("key:", 0) != 0 && auth.rfind("bearer:", 0) != 0) {
    return fail(Errc::invalid_argument, "--auth must be none, credential, key:FILE or bearer:FILE (got '" + auth + "')");
  }
  if (auth == "key:" || auth == "bearer:") return fail(Errc::invalid_argument, "--auth " + auth + " needs a file name");
  return {};
}

}  // namespace

Result<PushArgs> parse_push_args(const std::vector<std::string>& args) {
  PushArgs out;
  auto need_value = [&](std::size_t& i, const std::string& flag) -> Result<std::string> {
    if (i + 1 >= args.size()) return fail(Errc::invalid_argument, "option '" + flag + "' needs a value");
    return args[++i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (flag.rfind("--", 0) == 0) {
      if (auto eq = flag.find('='); eq != std::string::npos) {
        inline_value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
      }
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      return need_value(i, flag);
    };
    auto set = [&](std::string& dst) -> Result<void> {
      auto v = value();
      if (!v) return tl::unexpected(v.error());
      if (v->empty()) return fail(Errc::invalid_argument, "option '" + flag + "' needs a non-empty value");
      dst = *v;
      return {};
    };
    auto set_opt = [&](std::optional<std::string>& dst) -> Result<void> {
      std::string tmp;
      auto r = set(tmp);
      if (!r) return r;
      dst = tmp;
      return {};
    };
    auto no_value = [&]() -> Result<void> {
      if (inline_value) return fail(Errc::invalid_argument, "option '" + flag + "' takes no value");
      return {};
    };
    Result<void> r;
    if (flag == "--repo") r = set(out.repo);
    else if (flag == "--remote") r = set(out.remote);
    else if (flag == "--ref") r = set(out.ref);
    else if (flag == "--oid") r = set_opt(out.oid);
    else if (flag == "--rev") r = set_opt(out.rev);
    else if (flag == "--deadline") {
      auto v = value();
      if (!v) return tl::unexpected(v.error());
      auto d = parse_deadline(*v);
      if (!d) return tl::unexpected(d.error());
      out.deadline = *d;
    } else if (flag == "--auth") {
      r = set(out.auth);
      if (r) r = check_auth_spelling(out.auth);
    } else if (flag == "--ca-file") r = set_opt(out.ca_file);
    else if (flag == "--lane-dir") r = set_opt(out.lane_dir);
    else if (flag == "--pack-engine") {
      r = set(out.pack_engine);
      if (r && out.pack_engine != "libgit2" && out.pack_engine != "git") {
        return fail(Errc::invalid_argument, "--pack-engine must be libgit2 or git (got '" + out.pack_engine + "')");
      }
    }
    else if (flag == "--allow-http-loopback") { r = no_value(); out.allow_http_loopback = true; }
    else if (flag == "--json") { r = no_value(); out.json = true; }
    else if (flag == "--quiet" || flag == "-q") { r = no_value(); out.quiet = true; }
    else if (flag == "--help" || flag == "-h") { out.help = true; return out; }
    else if (flag.rfind("-", 0) == 0) return fail(Errc::invalid_argument, "unknown option '" + flag + "' for push");
    else return fail(Errc::invalid_argument, "unexpected argument '" + flag + "' for push");
    if (!r) return tl::unexpected(r.error());
  }
  for (auto [name, v] : {std::pair{"--repo", &out.repo}, {"--remote", &out.remote}, {"--ref", &out.ref}}) {
    if (v->empty()) return fail(Errc::invalid_argument, std::string("missing required option ") + name);
  }
  if (out.oid.has_value() == out.rev.has_value()) {
    return fail(Errc::invalid_argument, "give exactly one of --oid and --rev");
  }
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
