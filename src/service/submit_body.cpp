// submit_body.cpp — the POST body read field by field, in the order a
// person would fix them, every refusal kept; the request itself judged by
// the library's validate(); the repository looked at only through the
// RepositoryChecks given.
#include "service/submit_body.hpp"

#include <algorithm>

#include "service/resume.hpp"
#include "wire/grammar.hpp"
#include "wire/json.hpp"
#include "wire/remote.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

tl::unexpected<Refusal> refuse(int status, std::string code, std::string field, std::string message) {
  return tl::unexpected(Refusal{status, std::move(code), std::move(field), std::move(message)});
}

const char* const kPostFields[] = {"repo",           "remote", "ref", "oid",     "rev",    "deadline",
                                   "credential",     "update", "id",  "updates", "atomic", "push_options",
                                   "remote_progress"};

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

// "update": its shape here; the id of {"expect_old": ID} is validate()'s.
// `field` names it ("update", or "updates[N].update").
tl::expected<void, Refusal> update_rule(const json& body, const std::string& field, UpdateMode& mode,
                                        std::optional<std::string>& expect_old) {
  if (!body.contains("update")) return {};
  const json& u = body["update"];
  if (u.is_string() && u == "fast_forward") return {};
  if (u.is_string() && u == "force") {
    mode = UpdateMode::force;
    return {};
  }
  if (u.is_object() && u.size() == 1 && u.contains("expect_old") && u["expect_old"].is_string()) {
    mode = UpdateMode::expect_old;
    expect_old = u["expect_old"].get<std::string>();
    return {};
  }
  return refuse(400, "bad_field", field,
                "\"update\" is \"fast_forward\", \"force\" or {\"expect_old\": a full 40-hex id (all zeros: absent)}");
}

tl::expected<void, Refusal> update_field(const json& body, DeliveryRequest& req) {
  return update_rule(body, "update", req.update, req.expect_old);
}

// The object: exactly one of "oid" (a full id, judged by validate()) and
// "rev" (a revision of the repository, looked up here with the CLI's
// rules). Whether it is a commit or an annotated tag of one is validate()'s
// look, through the checks given. `at` prefixes the field names ("" or
// "updates[N].").
tl::expected<void, Refusal> object_of(const json& body, const std::string& at, const RepositoryChecks& checks,
                                      const std::string& repo, std::string& oid_out) {
  auto oid = string_field(body, "oid", false);
  if (!oid) return refuse(400, "bad_field", at + "oid", "\"oid\" must be a string");
  auto rev = string_field(body, "rev", false);
  if (!rev) return refuse(400, "bad_field", at + "rev", "\"rev\" must be a string");
  if (body.contains("oid") == body.contains("rev")) {
    return refuse(400, body.contains("oid") ? "bad_field" : "missing_field", at + "oid",
                  "give exactly one of \"oid\" and \"rev\"");
  }
  if (body.contains("oid")) {
    oid_out = *oid;
    return {};
  }
  if (repo.empty()) return {};  // no repository to look the revision up in (refused already)
  auto id = checks.resolve_revision(repo, *rev);
  if (!id) return refuse(400, "bad_field", at + "rev", id.error().message);
  oid_out = *id;
  return {};
}

tl::expected<void, Refusal> object_field(const json& body, const RepositoryChecks& checks, DeliveryRequest& req) {
  return object_of(body, "", checks, req.repo, req.oid);
}

// One element of "updates": {"ref", "oid" | "rev", "update"}, each field
// refused by its name ("updates[1].ref"); every refusal kept.
RefUpdate update_element(const json& e, std::size_t i, const RepositoryChecks& checks, const std::string& repo,
                         Refusals& out, bool& object_ok) {
  const std::string at = "updates[" + std::to_string(i) + "].";
  RefUpdate u;
  if (!e.is_object()) {
    out.push_back(Refusal{400, "bad_field", at.substr(0, at.size() - 1),
                          "each update is an object: {\"ref\", \"oid\" or \"rev\", \"update\"}"});
    return u;
  }
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (it.key() != "ref" && it.key() != "oid" && it.key() != "rev" && it.key() != "update") {
      out.push_back(Refusal{400, "unknown_field", at + it.key(), "unknown field \"" + it.key() + "\""});
    }
  }
  if (e.contains("ref") && !e["ref"].is_string()) {
    out.push_back(Refusal{400, "bad_field", at + "ref", "\"ref\" must be a string"});
  } else if (e.contains("ref")) {
    u.ref = e["ref"].get<std::string>();
  }
  if (auto ok = update_rule(e, at + "update", u.update, u.expect_old); !ok) out.push_back(ok.error());
  if (auto ok = object_of(e, at, checks, repo, u.oid); !ok) {
    out.push_back(ok.error());
    object_ok = false;
  }
  return u;
}

// "updates": a delivery of several refs (an array of updates), instead of
// "ref" and "oid"/"rev". Its bounds and a ref twice are validate()'s.
void updates_field(const json& body, const RepositoryChecks& checks, DeliveryRequest& req, Refusals& out,
                   bool& object_ok) {
  if (!body.contains("updates")) return;
  const json& list = body["updates"];
  if (!list.is_array() || list.empty()) {
    out.push_back(Refusal{400, "bad_field", "updates", "\"updates\" is a non-empty array of updates"});
    return;
  }
  if (list.size() > kMaxRefUpdates) {
    out.push_back(Refusal{
        400, "bad_field", "updates",
        std::to_string(list.size()) + " updates; at most " + std::to_string(kMaxRefUpdates) + " go in one delivery"});
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    req.updates.push_back(update_element(list[i], i, checks, req.repo, out, object_ok));
  }
}

// The objects: "ref" with "oid"/"rev" (one update), or "updates", never
// both. Returns whether they could be read (what validate() says of an
// object that could not is not said twice).
bool objects(const json& body, const RepositoryChecks& checks, DeliveryRequest& req, Refusals& out) {
  if (!body.contains("updates")) {
    auto one = object_field(body, checks, req);
    if (!one) out.push_back(one.error());
    return one.has_value();
  }
  if (body.contains("ref") || body.contains("oid") || body.contains("rev") || body.contains("update")) {
    out.push_back(Refusal{400, "bad_field", "updates",
                          "give either \"ref\" with \"oid\" or \"rev\" (one update) or \"updates\" (several), not "
                          "both (each update has its own \"update\")"});
  }
  bool object_ok = true;
  updates_field(body, checks, req, out, object_ok);
  return object_ok;
}

// "atomic": "automatic" (the default), "atomic" or "non_atomic"; and
// "push_options": an array of strings (their bounds are validate()'s).
void set_fields(const json& body, DeliveryRequest& req, Refusals& out) {
  if (body.contains("atomic")) {
    const auto word =
        body["atomic"].is_string() ? enum_from_word<Atomicity>(body["atomic"].get<std::string>()) : std::nullopt;
    if (!word) {
      out.push_back(Refusal{400, "bad_field", "atomic", "\"atomic\" is \"automatic\", \"atomic\" or \"non_atomic\""});
    } else {
      req.atomic = *word;
    }
  }
  if (!body.contains("push_options")) return;
  const json& list = body["push_options"];
  const bool strings =
      list.is_array() && std::all_of(list.begin(), list.end(), [](const json& v) { return v.is_string(); });
  if (!strings || list.size() > kMaxPushOptions) {
    out.push_back(Refusal{400, "bad_field", "push_options",
                          "\"push_options\" is an array of at most " + std::to_string(kMaxPushOptions) + " strings"});
    return;
  }
  for (const auto& v : list) req.push_options.push_back(v.get<std::string>());
}

constexpr const char* kCredentialOutOfScope = "credential_out_of_scope";

// Where a field's refusal stands among the others: the order a person
// would fix them in (the body's order below).
int rank(const std::string& field) {
  const char* const order[] = {"id",         "repo",   "remote",          "ref", "deadline",
                               "credential", "update", "remote_progress", "oid", "rev",
                               "updates",    "atomic", "push_options"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i) {
    if (field == order[i]) return i;
  }
  if (field.rfind("updates[", 0) == 0) return 10;  // in the order given
  if (field.rfind("push_options[", 0) == 0) return 12;
  return static_cast<int>(std::size(order));
}

// The first refusal of a reading, kept, and the reading goes on: every
// field is judged, not only the first bad one.
template <typename T>
bool keep(const tl::expected<T, Refusal>& r, Refusals& out) {
  if (r) return true;
  out.push_back(r.error());
  return false;
}

// validate()'s refusals in the body's words: "expect_old" is "update", the
// object of a "rev" is "rev"; what was refused already is not said twice.
// An update's field as the body names it: "updates[N].oid" of an update
// given by "rev" is its "rev" (nullopt: said already, when the revision
// was not looked up); "updates[N].expect_old" is its "update".
std::optional<std::string> update_field_name(const json& body, const FieldError& e) {
  const std::size_t close = e.field.find("].");
  if (e.field.rfind("updates[", 0) != 0 || close == std::string::npos) return e.field;
  const std::string at = e.field.substr(0, close + 2);
  const std::string leaf = e.field.substr(close + 2);
  const std::size_t i = std::stoul(e.field.substr(8, close - 8));
  const json& list = body["updates"];
  const bool by_rev = i < list.size() && list[i].is_object() && list[i].contains("rev");
  if (leaf == "oid" && by_rev) {
    if (e.code == std::string(kMissingField)) return std::nullopt;
    return at + "rev";
  }
  if (leaf == "expect_old") return at + "update";
  return e.field;
}

bool said(const Refusals& out, const std::string& field) {
  return std::any_of(out.begin(), out.end(), [&field](const Refusal& r) { return r.field == field; });
}

void take(const json& body, FieldErrors refused, bool repo_ok, bool object_ok, Refusals& out) {
  for (auto& e : refused) {
    if (e.field == "repo" && !repo_ok) continue;
    if (e.field.rfind("updates", 0) == 0) {
      auto name = update_field_name(body, e);
      if (!name || said(out, *name)) continue;
      out.push_back(Refusal{400, e.code, *name, e.message});
      continue;
    }
    if (e.field == "oid" && !object_ok) continue;
    if (e.field == "oid" && body.contains("rev")) {
      if (e.code == std::string(kMissingField)) continue;  // the revision was not looked up: said already
      e.field = "rev";
    }
    if (e.field == "expect_old") e.field = "update";
    // A5: the service's SSH key is a named credential.
    if (e.field == "ssh_key") {
      if (said(out, "credential")) continue;
      e.field = "credential";
      e.message = e.code == std::string(kMissingField)
                      ? e.message.substr(0, e.message.find(" (--auth")) + ": name a credential of kind ssh-key:FILE"
                      : "an SSH key (ssh-key:FILE) goes to ssh remotes only";
    }
    out.push_back(Refusal{e.code == kCredentialOutOfScope ? 403 : 400, e.code, e.field, e.message});
  }
}

// The set travels in the delivery's journal note (resume.hpp), which is
// bounded (kMaxJournalNote): a set and options too large for it are
// refused here rather than failing at submit().
void check_note_room(const DeliveryRequest& req, Refusals& out) {
  ServiceNote note;
  note.credential = std::string(128, 'x');  // room for the longest credential name
  note.updates = req.updates;
  note.push_options = req.push_options;
  if (note_text(note).size() <= kMaxJournalNote) return;
  out.push_back(Refusal{400, "bad_field", req.push_options.empty() ? "updates" : "push_options",
                        "the updates and push options take more than " + std::to_string(kMaxJournalNote) +
                            " bytes in the service's journal: send fewer or shorter ones"});
}

// Every field of the POST body, in the order a person would fix them; all
// the refusals, not only the first.
tl::expected<SubmitInput, Refusals> submission(const json& body, const ApiConfig& config,
                                               const RepositoryChecks& checks) {
  if (!body.is_object())
    return tl::unexpected(Refusals{Refusal{400, "bad_json", "", "the body must be a JSON object"}});
  Refusals out;
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::find(std::begin(kPostFields), std::end(kPostFields), it.key()) == std::end(kPostFields)) {
      out.push_back(Refusal{400, "unknown_field", it.key(), "unknown field \"" + it.key() + "\""});
    }
  }
  if (!out.empty()) return tl::unexpected(std::move(out));
  SubmitInput in;
  DeliveryRequest req;
  auto id = string_field(body, "id", false);
  if (keep(id, out) && (!id->empty() || body.contains("id"))) {
    if (auto ok = wire::check_delivery_id(*id); !ok) {
      out.push_back(Refusal{400, "bad_field", "id", ok.error().message});
    } else {
      in.id = *id;
    }
  }
  auto repo = repo_field(body, checks);
  const bool repo_ok = keep(repo, out);
  if (repo_ok) req.repo = *repo;
  auto remote = string_field(body, "remote", false);
  if (keep(remote, out)) req.remote = *remote;
  auto ref = string_field(body, "ref", false);
  if (keep(ref, out)) req.ref = *ref;
  auto deadline = deadline_field(body);
  if (keep(deadline, out)) in.deadline = *deadline;
  auto credential = string_field(body, "credential", false);
  std::optional<ServiceCredentials::const_iterator> named;
  if (keep(credential, out) && body.contains("credential")) {
    auto it = config.credentials.find(*credential);
    if (it == config.credentials.end()) {
      out.push_back(Refusal{400, "unknown_credential", "credential", "no credential named \"" + *credential + "\""});
    } else {
      named = it;
      req.ssh_key = it->second.ssh_key;  // A5: an ssh-key credential is the request's key (loaded at start)
    }
  }
  keep(update_field(body, req), out);
  if (body.contains("remote_progress")) {
    if (!body["remote_progress"].is_boolean()) {
      out.push_back(Refusal{400, "bad_field", "remote_progress", "\"remote_progress\" must be true or false"});
    } else {
      in.remote_progress = body["remote_progress"].get<bool>();
    }
  }
  const bool object_ok = objects(body, checks, req, out);
  set_fields(body, req, out);
  // The request itself: the one validation (H2: the remote read once, a
  // user name refused here since the service's credentials are named).
  req.allow_http_loopback = config.allow_http_loopback;
  ValidateOptions options;
  if (repo_ok) options.object_check = checks.gated_object;
  options.refuse_user_in_remote = "name a credential of the service instead";
  // A2: a named credential goes only to its scope.
  if (named) {
    options.remote_check = [&named](const std::string& canonical) -> std::optional<FieldError> {
      const auto& [name, configured] = **named;
      if (!scope_admits_canonical(configured.scope, canonical)) {
        return FieldError{"credential", kCredentialOutOfScope, out_of_scope_message(name, canonical)};
      }
      return std::nullopt;
    };
  }
  check_note_room(req, out);
  auto checked = validate(std::move(req), options);
  if (!checked) take(body, std::move(checked.error()), repo_ok, object_ok, out);
  if (!out.empty()) {
    std::stable_sort(out.begin(), out.end(),
                     [](const Refusal& a, const Refusal& b) { return rank(a.field) < rank(b.field); });
    return tl::unexpected(std::move(out));
  }
  if (named) {
    in.credential = (*named)->first;
    in.credential_spec = (*named)->second.spec;
  }
  in.checked = std::move(*checked);
  return in;
}

}  // namespace

tl::expected<SubmitInput, Refusals> read_submission(std::string_view body, const ApiConfig& config,
                                                    const RepositoryChecks& checks) {
  // The one bounded reader: a body nested past wire::kMaxJsonDepth, or with
  // a key twice in one object ("repo" judged on one value, used with
  // another), is refused whole.
  auto parsed = wire::parse_json(body, "the body");
  if (!parsed) return tl::unexpected(Refusals{Refusal{400, "bad_json", "", parsed.error().message}});
  return submission(*parsed, config, checks);
}

}  // namespace courier::service
