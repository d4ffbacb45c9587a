// credential_scope.cpp — scope entries, the scope check and the credentials
// of serve's options.
#include "service/credential_scope.hpp"

#include <algorithm>

#include "wire/remote.hpp"
#include "wire/url.hpp"

namespace courier::service {

namespace {

// Whether the canonical remote is the canonical entry or under it. Both are
// scheme://host[:port] followed by a path that starts with '/' and ends with
// '/' only when it is the root, so comparing the text up to and including a
// '/' after the entry compares scheme, host and port exactly and the path a
// whole segment at a time.
bool under(const std::string& entry, const std::string& remote) {
  if (remote == entry) return true;
  const std::string prefix = entry.back() == '/' ? entry : entry + "/";
  return remote.compare(0, prefix.size(), prefix) == 0;
}

std::string how_to_scope(const std::string& name, bool ssh) {
  const std::string example = ssh ? "ssh://USER@HOST/PATH" : "https://HOST/PATH";
  return "add --credential-scope " + name + "=" + example + " (in --config: \"credential-scope\": [\"" + name + "=" +
         example + "\"]), once for each remote or URL prefix it may be sent to";
}

// "ssh://[user@]host[:port]/": every repository of that user there. The
// remote parser refuses an ssh remote without a path, so the root is read
// as a repository under it and cut back.
Result<std::string> ssh_root_entry(std::string_view url) {
  auto r = wire::parse_remote(std::string(url) + "x");
  if (!r || r->url.scheme != "ssh" || r->url.path != "/x") return fail(Errc::invalid_argument, "");
  return r->canonical.substr(0, r->canonical.size() - 1);
}

// A5: an SSH key goes to ssh remotes only, every other credential to
// http(s) remotes only.
Result<void> check_kind(const std::string& name, const ServiceCredential& c, const std::string& entry) {
  const bool ssh_entry = entry.rfind("ssh://", 0) == 0;
  if (is_ssh_spec(c.spec) && !ssh_entry) {
    return fail(Errc::invalid_argument, "--credential-scope " + name + ": " + entry + " is not an ssh remote, and " +
                                            name + " is an SSH key (ssh-key:FILE), which goes to ssh remotes only");
  }
  if (!is_ssh_spec(c.spec) && ssh_entry) {
    return fail(Errc::invalid_argument, "--credential-scope " + name + ": " + entry + " is an ssh remote, and " + name +
                                            " is an http(s) credential, which never goes to one (give an ssh "
                                            "remote a --credential NAME=ssh-key:FILE)");
  }
  return {};
}

}  // namespace

bool is_ssh_spec(const std::string& spec) { return spec.rfind("ssh-key:", 0) == 0; }

Result<std::string> scope_entry(std::string_view url) {
  auto r = wire::parse_remote(url);
  if (!r && !url.empty() && url.back() == '/') {
    if (auto root = ssh_root_entry(url)) return root;
  }
  if (!r) return tl::unexpected(r.error());
  if (r->user && r->url.scheme != "ssh") {
    return fail(Errc::invalid_argument, "'" + wire::redact_url(url) + "' carries user information");
  }
  return r->canonical;
}

bool scope_admits(const std::vector<std::string>& scope, std::string_view remote) {
  auto r = wire::parse_remote(remote);
  if (!r) return false;
  return std::any_of(scope.begin(), scope.end(), [&](const std::string& e) { return under(e, r->canonical); });
}

bool scope_admits_canonical(const std::vector<std::string>& scope, const std::string& canonical) {
  return std::any_of(scope.begin(), scope.end(), [&](const std::string& e) { return under(e, canonical); });
}

bool scope_admits(const std::vector<std::string>& scope, const CheckedRequest& request) {
  return request.valid() && scope_admits_canonical(scope, request.remote());
}

Result<ServiceCredentials> service_credentials(const std::map<std::string, std::string>& specs,
                                               const std::map<std::string, std::vector<std::string>>& scopes) {
  for (const auto& [name, entries] : scopes) {
    if (specs.count(name) == 0) {
      return fail(Errc::invalid_argument, "--credential-scope " + name + ": no --credential named " + name);
    }
  }
  const std::vector<std::string> none;
  ServiceCredentials out;
  for (const auto& [name, spec] : specs) {
    const auto it = scopes.find(name);
    const std::vector<std::string>& entries = it == scopes.end() ? none : it->second;
    if (entries.empty()) {
      return fail(Errc::invalid_argument, "--credential " + name +
                                              " has no scope, so any remote a caller names would receive it: " +
                                              how_to_scope(name, is_ssh_spec(spec)));
    }
    ServiceCredential c{spec, {}, nullptr};
    for (const std::string& entry : entries) {
      auto e = scope_entry(entry);
      if (!e) return fail(Errc::invalid_argument, "--credential-scope " + name + ": " + e.error().message);
      if (auto ok = check_kind(name, c, *e); !ok) return tl::unexpected(ok.error());
      c.scope.push_back(*e);
    }
    out.emplace(name, std::move(c));
  }
  return out;
}

std::string out_of_scope_message(const std::string& name, std::string_view remote) {
  return "credential \"" + name + "\" may not be sent to " + wire::redact_url(remote) +
         ": the remote is outside the credential's scope (the service's --credential-scope " + name + "=...)";
}

}  // namespace courier::service
