// validate.cpp — a delivery request judged field by field, every refusal in
// one shape (FieldError), and what was read kept with it (CheckedParts):
// the command line, `push --via`, the service and Executor::submit all ask
// here, so one mistake is one field and one code wherever it is made.
#include <utility>

#include "request/checked_parts.hpp"
#include "sys/process.hpp"
#include "transport/oid.hpp"
#include "transport/refname.hpp"
#include "wire/text.hpp"

namespace courier {

namespace {

// How much of a refused value a message repeats.
constexpr std::size_t kShown = 120;

void refuse(FieldErrors& errors, std::string field, const char* code, std::string message) {
  errors.push_back(FieldError{std::move(field), code, std::move(message)});
}

std::string quoted(const std::string& value) { return "'" + wire::printable(value, kShown) + "'"; }

// H2 and T1: the remote read once, by the one URL owner. A password, an
// ambiguous spelling or a malformed URL never gets past here; nor a scheme
// the transport would refuse later.
std::optional<wire::Remote> check_remote(const DeliveryRequest& r, const ValidateOptions& options,
                                         FieldErrors& errors) {
  if (r.remote.empty()) {
    refuse(errors, "remote", kMissingField, "remote is required (an https:// URL or an ssh remote)");
    return std::nullopt;
  }
  auto parsed = wire::parse_remote(r.remote);
  if (!parsed) {
    refuse(errors, "remote", kBadRemote, parsed.error().message);
    return std::nullopt;
  }
  // An ssh remote's user name is part of the remote (H2), not a credential.
  if (parsed->user && options.refuse_user_in_remote && parsed->url.scheme != "ssh") {
    refuse(errors, "remote", kBadRemote,
           "remote '" + parsed->canonical + "' carries user information; " + *options.refuse_user_in_remote);
    return std::nullopt;
  }
  if (auto ok = wire::check_scheme(parsed->url, r.allow_http_loopback); !ok) {
    refuse(errors, "remote", kBadRemote, ok.error().message);
    return std::nullopt;
  }
  if (options.remote_check) {
    if (auto refused = options.remote_check(parsed->canonical)) errors.push_back(std::move(*refused));
  }
  return std::move(*parsed);
}

// A5: an ssh remote is reached with the request's key and nothing else (the
// parent is the only agent); an http(s) one never carries a key. The files
// ssh is given are named absolutely: the child runs in another directory.
void check_ssh(const DeliveryRequest& r, const std::optional<wire::Remote>& remote, bool key_elsewhere,
               FieldErrors& errors) {
  const bool ssh = remote && remote->url.scheme == "ssh";
  if (ssh && !r.ssh_key && !key_elsewhere) {
    refuse(errors, "ssh_key", kMissingField,
           "ssh_key is required for the ssh remote " + remote->canonical + " (--auth ssh-key:FILE)");
  } else if (remote && !ssh && r.ssh_key) {
    refuse(
        errors, "ssh_key", kBadField,
        "ssh_key is for ssh remotes; " + remote->canonical + " is " + remote->url.scheme + " (use --auth credential)");
  }
  if (!r.known_hosts.empty() && r.known_hosts.front() != '/') {
    refuse(errors, "known_hosts", kBadField, "known_hosts " + quoted(r.known_hosts) + " must be an absolute path");
  }
  if (r.ssh_program.empty()) return;
  if (r.ssh_program.front() != '/') {
    refuse(errors, "ssh_program", kBadField, "ssh_program " + quoted(r.ssh_program) + " must be an absolute path");
  } else if (!sys::is_executable_file(r.ssh_program)) {
    refuse(errors, "ssh_program", kBadField, "ssh_program " + quoted(r.ssh_program) + " is not an executable file");
  }
}

// T1: a proxy kind other than an http:// CONNECT tunnel is refused, never
// bypassed; the message never shows its credentials.
std::optional<wire::Proxy> check_proxy(const std::string& text, FieldErrors& errors) {
  auto proxy = wire::parse_proxy(text);
  if (!proxy) {
    refuse(errors, "proxy", kBadField, proxy.error().message);
    return std::nullopt;
  }
  return std::move(*proxy);
}

// One update: the ref a push may target (T4: named back byte for byte),
// the object as a full id (the zero id: a deletion, nothing to look at),
// and the lease's id. The object is looked at in the repository only when
// the caller asked and the repository passed. `at` names the update's
// fields: "" for the request's own ref and oid, "updates[N]." for a set.
void check_update(const RefUpdate& u, const std::string& at, const std::string& repo, bool repo_ok,
                  const ValidateOptions& options, FieldErrors& errors) {
  if (u.ref.empty()) {
    refuse(errors, at + "ref", kMissingField, "ref is required (a full ref name to update, e.g. refs/heads/main)");
  } else if (!transport::is_valid_push_refname(u.ref)) {
    refuse(errors, at + "ref", kBadField,
           "ref " + quoted(u.ref) + " is not a full ref name to update (e.g. refs/heads/main)");
  }
  if (u.oid.empty()) {
    refuse(errors, at + "oid", kMissingField, "oid is required (a full 40-hex object id; all zeros deletes the ref)");
  } else if (!transport::is_valid_oid(u.oid)) {
    refuse(errors, at + "oid", kBadField, "oid " + quoted(u.oid) + " is not a full 40-hex object id");
  } else if (options.object_check && repo_ok && !u.deletes()) {
    if (auto ok = options.object_check(repo, u.oid); !ok) refuse(errors, at + "oid", kBadField, ok.error().message);
  }
  if (u.expect_old && !transport::is_valid_oid(*u.expect_old)) {
    refuse(
        errors, at + "expect_old", kBadField,
        "expect_old " + quoted(*u.expect_old) + " is not a full 40-hex object id (all zeros: the ref must not exist)");
  } else if (u.update == UpdateMode::expect_old && !u.expect_old) {
    refuse(errors, at + "expect_old", kMissingField,
           "update expect_old needs expect_old: the id the remote's ref must be at");
  }
}

// The request's updates: its own ref and oid, or its `updates`, never
// both; at most kMaxRefUpdates; no destination twice (a deletion and an
// update of one ref is the same mistake, said as such).
std::vector<RefUpdate> updates_of(const DeliveryRequest& r, FieldErrors& errors) {
  if (r.updates.empty()) return {RefUpdate{r.ref, r.oid, r.update, r.expect_old}};
  if (!r.ref.empty() || !r.oid.empty() || r.expect_old) {
    refuse(errors, "updates", kBadField, "give either ref and oid (one update) or updates (several), not both");
  }
  if (r.updates.size() > kMaxRefUpdates) {
    refuse(errors, "updates", kBadField,
           std::to_string(r.updates.size()) + " updates; at most " + std::to_string(kMaxRefUpdates) +
               " go in one delivery");
  }
  for (std::size_t i = 0; i < r.updates.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (r.updates[k].ref != r.updates[i].ref || r.updates[i].ref.empty()) continue;
      const bool both = r.updates[k].deletes() != r.updates[i].deletes();
      refuse(errors, "updates[" + std::to_string(i) + "].ref", kBadField,
             both ? "ref " + quoted(r.updates[i].ref) + " is both deleted and updated; a ref takes one update"
                  : "ref " + quoted(r.updates[i].ref) + " is a destination twice; a ref takes one update");
      break;
    }
  }
  return r.updates;
}

// Push options, as git sends them: one pkt-line each, so no newline (git
// refuses one too) and no NUL; bounded in count and length.
void check_push_options(const std::vector<std::string>& options, FieldErrors& errors) {
  if (options.size() > kMaxPushOptions) {
    refuse(errors, "push_options", kBadField,
           std::to_string(options.size()) + " push options; at most " + std::to_string(kMaxPushOptions) +
               " go with one delivery");
  }
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    const std::string at = "push_options[" + std::to_string(i) + "]";
    if (o.find_first_of(std::string("\n\0", 2)) != std::string::npos) {
      refuse(errors, at, kBadField, "push option " + quoted(o) + " contains a newline or a NUL; git refuses those");
    } else if (o.size() > kMaxPushOptionBytes) {
      refuse(errors, at, kBadField,
             "push option of " + std::to_string(o.size()) + " bytes; at most " + std::to_string(kMaxPushOptionBytes));
    }
  }
}

}  // namespace

bool RefUpdate::deletes() const { return transport::is_zero_oid(oid); }

bool CheckedParts::still_describes(const DeliveryRequest& r) const {
  const bool same_updates =
      r.updates.empty() ? updates.size() == 1 && updates.front() == RefUpdate{r.ref, r.oid, r.update, r.expect_old}
                        : r.updates == updates;
  return r.repo == repo && r.remote == remote_text && r.proxy == proxy_text &&
         r.allow_http_loopback == allow_http_loopback && same_updates && r.push_options == push_options &&
         r.atomic == atomic && (r.ssh_key != nullptr) == has_ssh_key && r.known_hosts == known_hosts &&
         r.ssh_program == ssh_program;
}

std::string describe(const FieldErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e.message;
  return out;
}

const std::string& CheckedRequest::remote() const { return parts_->remote.canonical; }
const std::string& CheckedRequest::lane() const { return parts_->remote.lane; }
const std::vector<RefUpdate>& CheckedRequest::updates() const { return parts_->updates; }

bool CheckedRequest::atomic() const {
  return parts_->atomic == Atomicity::atomic || (parts_->atomic == Atomicity::automatic && parts_->updates.size() > 1);
}

tl::expected<void, FieldErrors> CheckedRequest::set_proxy(std::optional<std::string> proxy) {
  if (!parts_) return tl::unexpected(FieldErrors{{"request", kBadField, "the request was not validated"}});
  auto parts = std::make_shared<CheckedParts>(*parts_);
  parts->proxy.reset();
  if (proxy) {
    FieldErrors errors;
    parts->proxy = check_proxy(*proxy, errors);
    if (!errors.empty()) return tl::unexpected(std::move(errors));
  }
  parts->proxy_text = proxy;
  request_.proxy = std::move(proxy);
  parts_ = std::move(parts);
  return {};
}

tl::expected<CheckedRequest, FieldErrors> validate(DeliveryRequest request, const ValidateOptions& options) {
  FieldErrors errors;
  auto parts = std::make_shared<CheckedParts>();
  const bool repo_ok = !request.repo.empty();
  if (!repo_ok) refuse(errors, "repo", kMissingField, "repo is required (the local repository's path)");
  auto remote = check_remote(request, options, errors);
  check_ssh(request, remote, options.ssh_key_elsewhere, errors);
  parts->updates = updates_of(request, errors);
  const bool one = request.updates.empty();
  for (std::size_t i = 0; i < parts->updates.size(); ++i) {
    const std::string at = one ? "" : "updates[" + std::to_string(i) + "].";
    check_update(parts->updates[i], at, request.repo, repo_ok, options, errors);
  }
  check_push_options(request.push_options, errors);
  parts->push_options = request.push_options;
  parts->atomic = request.atomic;
  if (request.proxy) parts->proxy = check_proxy(*request.proxy, errors);
  if (!errors.empty()) return tl::unexpected(std::move(errors));
  parts->remote = std::move(*remote);
  parts->repo = request.repo;
  parts->remote_text = request.remote;
  parts->proxy_text = request.proxy;
  parts->allow_http_loopback = request.allow_http_loopback;
  parts->has_ssh_key = request.ssh_key != nullptr;
  parts->known_hosts = request.known_hosts;
  parts->ssh_program = request.ssh_program;
  CheckedRequest out;
  out.request_ = std::move(request);
  out.parts_ = std::move(parts);
  return out;
}

}  // namespace courier
