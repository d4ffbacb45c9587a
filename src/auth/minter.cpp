// minter.cpp — leg binding (A2) and the mint gate (A2, A3).
#include "auth/minter.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "auth/crypto.hpp"

namespace courier::auth {

namespace {

// The repository's base path: the remote's path without its trailing "/"s
// ("" for the root), so that base + "/info/refs" is the leg's path.
std::string repo_base(const std::string& path) {
  std::string base = path;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

// "." or ".." as a path segment, also when spelled with %2e escapes: such a
// path may resolve outside the repository on the server, so it is never
// "this delivery's repository".
bool has_dot_segment(std::string_view path) {
  std::size_t at = 0;
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    std::string segment;
    for (std::size_t i = at; i < end; ++i) {
      if (path[i] == '%' && i + 2 < end && path[i + 1] == '2' && (path[i + 2] == 'e' || path[i + 2] == 'E')) {
        segment.push_back('.');
        i += 2;
      } else {
        segment.push_back(path[i]);
      }
    }
    if (segment == "." || segment == "..") return true;
    if (end == path.size()) break;
    at = end + 1;
  }
  return false;
}

std::string describe(const wire::Url& u) { return u.scheme + "://" + u.host + ":" + std::to_string(u.port); }

}  // namespace

// ---- binding ----------------------------------------------------------------

Binding check_leg_binding(std::string_view remote, const MintRequest& request, bool body_hash_required) {
  auto refused = [](std::string why) { return Binding{BindingVerdict::refused, std::move(why), {}}; };
  auto foreign = [&](std::string why) {
    return Binding{BindingVerdict::foreign, "'" + request.url + "' " + std::move(why), {}};
  };

  auto want = wire::parse_url(remote);
  if (!want || want->query) return refused("the delivery's remote URL is malformed");
  auto got = wire::parse_url(request.url);
  if (!got) return foreign("is not a URL this delivery can use (" + got.error().message + ")");
  // The child requests the canonical remote, which never carries user
  // information (H2): a user name stays with the credential helper.
  if (got->userinfo) return foreign("carries user information");
  if (got->scheme != want->scheme || got->host != want->host || got->port != want->port) {
    return foreign("names " + describe(*got) + ", not the delivery's " + describe(*want));
  }
  const std::string base = repo_base(want->path);
  const std::string& path = got->path;
  if (has_dot_segment(path)) return foreign("has a '.' or '..' path segment");
  if (path.compare(0, base.size() + 1, base + "/") != 0) {
    return foreign("is outside the delivery's repository " + (base.empty() ? std::string("/") : base));
  }

  // This delivery's repository: from here on a mismatch is a refusal.
  const wire::LegSpec* leg = wire::find_leg(request.leg);
  if (leg == nullptr) return refused("no token is minted for leg '" + request.leg + "'");
  const std::string expected_method(leg->method);
  const std::string expected_path = base + std::string(leg->path_suffix);
  const std::optional<std::string> expected_query =
      leg->query.empty() ? std::nullopt : std::optional<std::string>(std::string(leg->query));
  if (request.method != expected_method) {
    return refused("leg '" + request.leg + "' is a " + expected_method + ", not a " + request.method);
  }
  if (path != expected_path || got->query != expected_query) {
    return refused("'" + request.url + "' is not the " + request.leg + " URL of this delivery's remote");
  }
  if (request.method == "POST") {
    if (!request.body_sha256 && body_hash_required) {
      return refused("a receive-pack POST needs the body's SHA-256 (body_sha256)");
    }
    if (request.body_sha256 && !is_sha256_hex(*request.body_sha256)) {
      return refused("body_sha256 must be 64 lower-case hex digits");
    }
  } else if (request.body_sha256) {
    return refused("the advertisement GET has no body to hash");
  }
  return Binding{BindingVerdict::ok, {}, got->without_userinfo()};
}

// ---- the gate -----------------------------------------------------------------

MintGate::MintGate(std::shared_ptr<Minter> minter, MintContext context, AuthorityFn authority, MintGateOptions options)
    : minter_(std::move(minter)),
      context_(std::move(context)),
      authority_(std::move(authority)),
      options_(std::move(options)) {
  if (!options_.mono_clock) options_.mono_clock = sys::mono_now_ns;
}

MintAnswer MintGate::answer(const MintRequest& request) {
  MintAnswer out;
  auto refuse = [&out](std::string why) {
    out.refused = std::move(why);
    return out;
  };
  const int n = ++requests_;

  if (!minter_ || !options_.authenticated) return refuse("this delivery carries no credentials");
  Binding binding = check_leg_binding(context_.remote, request, minter_->binds_payload());
  if (binding.verdict == BindingVerdict::foreign) {
    out.foreign = true;
    return refuse(std::move(binding.reason));
  }
  if (binding.verdict != BindingVerdict::ok) return refuse(std::move(binding.reason));
  if (n > options_.max_mints) {
    return refuse("more than " + std::to_string(options_.max_mints) + " mint requests for one delivery");
  }
  if (options_.mono_clock() >= context_.deadline) return refuse("the delivery's deadline has passed");
  if (authority_) {
    const AuthorityAnswer before = authority_("mint");
    if (!before.ok) {
      out.revoked = true;
      return refuse("authority refused before minting: " +
                    (before.reason.empty() ? std::string("no reason given") : before.reason));
    }
  }

  LegRequest leg{context_, request.leg, request.method, request.url, request.body_sha256, request.fence};
  auto header = minter_->mint(leg);
  if (!header) return refuse(header.error().message);

  // A header is one line that names Authorization: anything else could
  // smuggle a second header or a body into the child's request.
  if (header->rfind("Authorization: ", 0) != 0 || header->find_first_of("\r\n") != std::string::npos ||
      header->find('\0') != std::string::npos) {
    wipe(*header);
    return refuse("the minter produced a malformed header");
  }
  if (options_.mono_clock() >= context_.deadline) {
    wipe(*header);
    return refuse("the delivery's deadline passed while minting");
  }
  // A3: the delivery may have been revoked while the minter ran. Its token
  // is dropped here and never reaches the pipe.
  if (authority_) {
    const AuthorityAnswer after = authority_("mint");
    if (!after.ok) {
      wipe(*header);
      out.revoked = true;
      return refuse(after.reason.empty() ? std::string("authority revoked, no reason given") : after.reason);
    }
  }
  ++minted_;
  out.header = std::move(*header);
  return out;
}

MintFn make_mint_callback(std::shared_ptr<Minter> minter, MintContext context, AuthorityFn authority,
                          MintGateOptions options) {
  auto gate =
      std::make_shared<MintGate>(std::move(minter), std::move(context), std::move(authority), std::move(options));
  return [gate](const MintRequest& request) { return gate->answer(request); };
}

}  // namespace courier::auth
