// submit_body.cpp — the POST body read field by field, in the order a
// person would fix them; the repository looked at only through the
// RepositoryChecks given.
#include "service/submit_body.hpp"

#include <algorithm>

#include "transport/oid.hpp"
#include "transport/refname.hpp"
#include "wire/grammar.hpp"
#include "wire/json.hpp"
#include "wire/remote.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

tl::unexpected<Refusal> refuse(int status, std::string code, std::string field, std::string message) {
  return tl::unexpected(Refusal{status, std::move(code), std::move(field), std::move(message)});
}

const char* const kPostFields[] = {"repo",     "remote",     "ref",    "oid", "rev",
                                   "deadline", "credential", "update", "id",  "remote_progress"};

tl::expected<std::string, Refusal> string_field(const json& body, const char* name, bool required) {
  if (!body.contains(name)) {
    if (required) return refuse(400, "missing_field", name, std::string("\"") + name + "\" is required");
    return std::string();
  }
  if (!body[name].is_string()) return refuse(400, "bad_field", name, std::string("\"") + name + "\" must be a string");
  return body[name].get<std::string>();
}

// "deadline": a duration as the CLI spells it ("90s", "2m30s") or a number
// of seconds; at most 24 h.
tl::expected<std::chrono::milliseconds, Refusal> deadline_field(const json& body) {
  if (!body.contains("deadline")) return wire::kDefaultDeadline;
  const json& v = body["deadline"];
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_number_unsigned()) {
    // Compared as the number it is: through a signed type,
    // 18446744073709551615 would read as -1.
    const std::uint64_t seconds = v.get<std::uint64_t>();
    if (seconds >
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(wire::kMaxDeadline).count())) {
      return refuse(400, "bad_field", "deadline", "\"deadline\" is longer than 24 h");
    }
    text = std::to_string(seconds);
  } else if (v.is_number_integer()) {  // a signed integer here is a negative one
    return refuse(400, "bad_field", "deadline", "\"deadline\" must be a positive duration");
  } else if (v.is_number_float()) {
    text = v.dump();
  } else {
    return refuse(400, "bad_field", "deadline", "\"deadline\" must be a duration (\"90s\") or a number of seconds");
  }
  auto d = wire::parse_duration(text);
  if (!d) return refuse(400, "bad_field", "deadline", d.error().message);
  if (*d > wire::kMaxDeadline) return refuse(400, "bad_field", "deadline", "\"deadline\" is longer than 24 h");
  return *d;
}

// The repository: absolute, then found (symlinks resolved) under the root.
tl::expected<std::string, Refusal> repo_field(const json& body, const RepositoryChecks& checks) {
  auto repo = string_field(body, "repo", true);
  if (!repo) return tl::unexpected(repo.error());
  if (repo->empty() || (*repo)[0] != '/') return refuse(400, "bad_field", "repo", "\"repo\" must be an absolute path");
  return checks.locate(*repo);
}

tl::expected<void, Refusal> update_field(const json& body, SubmitInput& in) {
  if (!body.contains("update")) return {};
  const json& u = body["update"];
  if (u.is_string() && u == "fast_forward") return {};
  if (u.is_string() && u == "force") {
    in.update = UpdateMode::force;
    return {};
  }
  if (u.is_object() && u.size() == 1 && u.contains("expect_old") && u["expect_old"].is_string() &&
      transport::is_valid_oid(u["expect_old"].get<std::string>())) {
    in.update = UpdateMode::expect_old;
    in.expect_old = u["expect_old"].get<std::string>();
    return {};
  }
  return refuse(400, "bad_field", "update",
                "\"update\" is \"fast_forward\", \"force\" or {\"expect_old\": a full 40-hex id (all zeros: absent)}");
}

// The object: exactly one of "oid" (a full id) and "rev" (a revision of the
// repository, looked up here with the CLI's rules), checked to be a commit
// or an annotated tag of one.
tl::expected<void, Refusal> object_field(const json& body, const RepositoryChecks& checks, SubmitInput& in) {
  auto oid = string_field(body, "oid", false);
  if (!oid) return tl::unexpected(oid.error());
  auto rev = string_field(body, "rev", false);
  if (!rev) return tl::unexpected(rev.error());
  if (body.contains("oid") == body.contains("rev")) {
    return refuse(400, body.contains("oid") ? "bad_field" : "missing_field", "oid",
                  "give exactly one of \"oid\" and \"rev\"");
  }
  if (body.contains("oid")) {
    if (!transport::is_valid_oid(*oid)) return refuse(400, "bad_field", "oid", "\"oid\" must be a full 40-hex id");
    if (auto ok = checks.gated_object(in.repo, *oid); !ok) {
      return refuse(400, "bad_field", "oid", ok.error().message);
    }
    in.oid = *oid;
    return {};
  }
  auto id = checks.resolve_revision(in.repo, *rev);
  if (!id) return refuse(400, "bad_field", "rev", id.error().message);
  if (auto ok = checks.gated_object(in.repo, *id); !ok) return refuse(400, "bad_field", "rev", ok.error().message);
  in.oid = *id;
  return {};
}

tl::expected<void, Refusal> remote_field(const json& body, bool allow_http_loopback, SubmitInput& in) {
  auto remote = string_field(body, "remote", true);
  if (!remote) return tl::unexpected(remote.error());
  // The one URL owner (H2): a password, an ambiguous spelling or a
  // malformed URL is refused here; only the canonical form is kept.
  auto parsed = wire::parse_remote(*remote);
  if (!parsed) return refuse(400, "bad_remote", "remote", parsed.error().message);
  if (parsed->user) {
    return refuse(400, "bad_remote", "remote",
                  "\"remote\" carries user information; name a credential of the service instead");
  }
  if (auto ok = wire::check_scheme(parsed->url, allow_http_loopback); !ok) {
    return refuse(400, "bad_remote", "remote", ok.error().message);
  }
  in.remote = parsed->canonical;
  in.remote_canonical = parsed->canonical;
  return {};
}

// Every field of the POST body, in the order a person would fix them.
tl::expected<SubmitInput, Refusal> submission(const json& body, const ApiConfig& config,
                                              const RepositoryChecks& checks) {
  if (!body.is_object()) return refuse(400, "bad_json", "", "the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::find(std::begin(kPostFields), std::end(kPostFields), it.key()) == std::end(kPostFields)) {
      return refuse(400, "unknown_field", it.key(), "unknown field \"" + it.key() + "\"");
    }
  }
  SubmitInput in;
  auto id = string_field(body, "id", false);
  if (!id) return tl::unexpected(id.error());
  if (!id->empty() || body.contains("id")) {
    if (auto ok = wire::check_delivery_id(*id); !ok) return refuse(400, "bad_field", "id", ok.error().message);
    in.id = *id;
  }
  auto repo = repo_field(body, checks);
  if (!repo) return tl::unexpected(repo.error());
  in.repo = *repo;
  if (auto ok = remote_field(body, config.allow_http_loopback, in); !ok) return tl::unexpected(ok.error());
  auto ref = string_field(body, "ref", true);
  if (!ref) return tl::unexpected(ref.error());
  if (!transport::is_valid_push_refname(*ref)) {
    return refuse(400, "bad_field", "ref", "\"ref\" must be a full ref name to update (e.g. refs/heads/main)");
  }
  in.ref = *ref;
  auto deadline = deadline_field(body);
  if (!deadline) return tl::unexpected(deadline.error());
  in.deadline = *deadline;
  auto credential = string_field(body, "credential", false);
  if (!credential) return tl::unexpected(credential.error());
  if (body.contains("credential")) {
    auto it = config.credentials.find(*credential);
    if (it == config.credentials.end()) {
      return refuse(400, "unknown_credential", "credential", "no credential named \"" + *credential + "\"");
    }
    if (!scope_admits(it->second.scope, in.remote_canonical)) {
      return refuse(403, "credential_out_of_scope", "credential", out_of_scope_message(it->first, in.remote_canonical));
    }
    in.credential = it->first;
    in.credential_spec = it->second.spec;
  }
  if (auto ok = update_field(body, in); !ok) return tl::unexpected(ok.error());
  if (body.contains("remote_progress")) {
    if (!body["remote_progress"].is_boolean()) {
      return refuse(400, "bad_field", "remote_progress", "\"remote_progress\" must be true or false");
    }
    in.remote_progress = body["remote_progress"].get<bool>();
  }
  if (auto ok = object_field(body, checks, in); !ok) return tl::unexpected(ok.error());
  return in;
}

}  // namespace

tl::expected<SubmitInput, Refusal> read_submission(std::string_view body, const ApiConfig& config,
                                                   const RepositoryChecks& checks) {
  // The one bounded reader: a body nested past wire::kMaxJsonDepth, or with
  // a key twice in one object ("repo" judged on one value, used with
  // another), is refused whole.
  auto parsed = wire::parse_json(body, "the body");
  if (!parsed) return refuse(400, "bad_json", "", parsed.error().message);
  return submission(*parsed, config, checks);
}

}  // namespace courier::service
