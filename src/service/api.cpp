// api.cpp — the routes of /v1 and the JSON documents; the POST body is read
// in submit_body.*, with the repository looked at here.
#include "service/api.hpp"

#include <filesystem>

#include "journal/journal.hpp"
#include "repo/repository.hpp"
#include "report/outcome_json.hpp"
#include "service/event_numbering.hpp"
#include "service/repo_root.hpp"
#include "service/routes.hpp"
#include "wire/json.hpp"
#include "wire/remote.hpp"
#include "wire/url.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

ApiResponse document(int status, const json& j) {
  ApiResponse r;
  r.status = status;
  r.body = dump(j);
  return r;
}

// The service's look at a repository: the filesystem and libgit2.
RepositoryChecks repository_checks(const std::string& root) {
  RepositoryChecks c;
  c.locate = [root](const std::string& repo) -> tl::expected<std::string, Refusal> {
    std::error_code ec;
    const auto real = std::filesystem::canonical(repo, ec);
    if (ec) return tl::unexpected(Refusal{400, "bad_field", "repo", "\"repo\": no repository at " + repo});
    const std::string path = real.string();
    if (!is_under_root(path, root)) {
      return tl::unexpected(
          Refusal{403, "repo_outside_root", "repo", "\"repo\" " + repo + " is outside the service's --repo-root"});
    }
    // Where its objects are read from too: a .git file, a commondir or an
    // alternate naming a place outside the root is the same escape.
    if (auto inside = check_repository_under_root(path, root); !inside) {
      return tl::unexpected(
          Refusal{403, "repo_outside_root", "repo",
                  "\"repo\" " + repo + " reads objects outside the service's --repo-root: " + inside.error().message});
    }
    return path;
  };
  c.gated_object = [](const std::string& repo, const std::string& oid) { return repo::check_gated_object(repo, oid); };
  c.resolve_revision = [](const std::string& repo, const std::string& rev) -> Result<std::string> {
    if (auto ok = repo::check_bounded_revision("\"rev\"", rev); !ok) return tl::unexpected(ok.error());
    return repo::resolve_revision(repo, rev);
  };
  return c;
}

json error_object(const Refusal& r) {
  return {{"code", r.code}, {"field", r.field.empty() ? json(nullptr) : json(r.field)}, {"message", r.message}};
}

// One refusal: {"error": {"code", "field" (null for none), "message"}}.
ApiResponse error_document(int status, const std::string& code, const std::string& field, const std::string& message) {
  return document(status, {{"error", error_object(Refusal{status, code, field, message})}});
}

// A refused submission: the first refusal is the answer's "error" (its
// status, too), and every refusal is in "errors", in the same shape.
ApiResponse refused(const Refusals& all) {
  json errors = json::array();
  for (const auto& r : all) errors.push_back(error_object(r));
  return document(all.front().status, {{"error", error_object(all.front())}, {"errors", errors}});
}

json outcome_doc(const Outcome& o, const std::string& remote, const std::string& ref, const std::string& oid) {
  return report::outcome_to_json(o, report::OutcomeFacts{remote, ref, oid, std::nullopt});
}

std::optional<Outcome> recorded_outcome(const journal::Record& r) {
  auto last = r.last(journal::Step::finished);
  if (!last) return std::nullopt;
  auto o = journal::outcome_from_detail(last->detail);
  if (!o) return std::nullopt;
  return *o;
}

json transitions(const std::optional<journal::Record>& r) {
  json out = json::array();
  if (!r) return out;
  for (const auto& e : r->entries) {
    // A row of the shared database may be hostile: read through the one
    // bounded reader, and an unreadable detail is shown as empty.
    auto parsed = wire::parse_json(e.detail, "the entry's detail");
    json detail = parsed ? std::move(*parsed) : json::object();
    out.push_back({{"step", journal::step_name(e.step)},
                   {"attempt", e.attempt},
                   {"at_unix_ms", e.at_unix_ms},
                   {"detail", detail}});
  }
  return out;
}

std::string_view finished_word() { return enum_word(DeliveryState::finished); }

// What ?state= may be: "\"state\" is queued, pending, running or finished".
std::string state_words() {
  std::string out = "\"state\" is ";
  const auto& rows = word_rows(DeliveryState{});
  const std::size_t n = std::size(rows);
  for (std::size_t i = 0; i < n; ++i) {
    out += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(rows[i].word);
  }
  return out;
}

std::optional<std::uint64_t> number(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(text);
}

}  // namespace

std::map<std::string, std::string> parse_query(const std::string& query) {
  std::map<std::string, std::string> out;
  const auto decode = [](const std::string& s) { return wire::form_decode(s); };
  std::size_t at = 0;
  while (at <= query.size() && !query.empty()) {
    const std::size_t end = std::min(query.find('&', at), query.size());
    const std::string pair = query.substr(at, end - at);
    const std::size_t eq = pair.find('=');
    if (!pair.empty()) out[decode(pair.substr(0, eq))] = eq == std::string::npos ? "" : decode(pair.substr(eq + 1));
    at = end + 1;
  }
  return out;
}

Api::Api(ApiConfig config, Deliveries& deliveries, Metrics& metrics)
    : config_(std::move(config)), deliveries_(deliveries), metrics_(metrics) {}

ApiResponse Api::error(int status, const std::string& code, const std::string& field, const std::string& message) {
  metrics_.api_request(status);
  return error_document(status, code, field, message);
}

ApiResponse Api::handle(const ApiRequest& r) {
  ApiResponse out = route(r);
  metrics_.api_request(out.status);
  return out;
}

// The route table (routes.hpp) decides where a request goes; what is not
// routed is answered here with the router's own statuses.
ApiResponse Api::route(const ApiRequest& r) {
  const RouteMatch m = match_route(r.method, r.path);
  switch (m.result) {
    case RouteMatch::Result::found:
      break;
    case RouteMatch::Result::no_route:
      return error_document(404, "not_found", "", "no route " + r.path);
    case RouteMatch::Result::bad_id:
      return error_document(404, "not_found", "", "no delivery " + m.id);
    case RouteMatch::Result::method_not_allowed: {
      ApiResponse refused = error_document(405, "method_not_allowed", "", r.method + " " + r.path + " is not allowed");
      refused.headers.emplace_back("Allow", m.allow);
      return refused;
    }
  }
  switch (m.route->name) {
    case RouteName::submit:
      return post_delivery(r);
    case RouteName::list:
      return list(r.query);
    case RouteName::show:
      return get_delivery(m.id);
    case RouteName::revoke:
      return delete_delivery(m.id);
    case RouteName::events:
      return get_events(m.id, r.query);
    case RouteName::health:
      return health();
    case RouteName::metrics:
      return metrics_text();
  }
  return error_document(404, "not_found", "", "no route " + r.path);
}

ApiResponse Api::metrics_text() {
  ApiResponse m;
  m.content_type = "text/plain; version=0.0.4";
  m.body = metrics_.text(deliveries_.gauges());
  return m;
}

ApiResponse Api::post_delivery(const ApiRequest& r) {
  if (r.body_too_large) {
    return error_document(413, "body_too_large", "", "the body is larger than " + std::to_string(kMaxBody) + " bytes");
  }
  if (deliveries_.draining())
    return error_document(503, "draining", "", "the service is stopping and accepts no delivery");
  auto in = read_submission(r.body, config_, repository_checks(config_.repo_root));
  if (!in) return refused(in.error());
  SubmitResult s = deliveries_.submit(*in);
  switch (s.kind) {
    case SubmitResult::Kind::accepted:
    case SubmitResult::Kind::existing:
      return document(202,
                      {{"id", s.delivery->id}, {"state", s.delivery->state()}, {"attempt", s.delivery->attempt()}});
    case SubmitResult::Kind::replayed:
      return document(200, {{"id", s.outcome.delivery_id},
                            {"state", finished_word()},
                            {"replayed", true},
                            {"outcome", outcome_doc(s.outcome, in->checked.remote(), in->checked.updates().front().ref,
                                                    in->checked.updates().front().oid)}});
    case SubmitResult::Kind::conflict:
      return error_document(409, "id_conflict", "id", s.message);
    case SubmitResult::Kind::queue_full: {
      ApiResponse q = error_document(
          429, "queue_full", "",
          "too many deliveries are waiting (--max-queued); retry after " + std::to_string(s.retry_after_s) + " s");
      q.headers.emplace_back("Retry-After", std::to_string(s.retry_after_s));
      return q;
    }
    case SubmitResult::Kind::draining:
      return error_document(503, "draining", "", "the service is stopping and accepts no delivery");
    case SubmitResult::Kind::refused:
      break;
  }
  return error_document(500, "credential_failed", "credential", s.message);
}

ApiResponse Api::get_delivery(const std::string& id) {
  auto rec = deliveries_.journalled(id);
  if (auto d = deliveries_.find(id)) {
    auto o = d->outcome();
    return document(200, {{"id", d->id},
                          {"state", d->state()},
                          {"attempt", d->attempt()},
                          {"repo", d->repo},
                          {"remote", d->remote},
                          {"ref", d->ref},
                          {"oid", d->oid},
                          {"transitions", transitions(rec)},
                          {"outcome", o ? outcome_doc(*o, d->remote, d->ref, d->oid) : json(nullptr)}});
  }
  if (!rec) {
    return document(404, {{"error", {{"code", "not_found"}, {"field", nullptr}, {"message", "no delivery " + id}}}});
  }
  const auto& s = rec->submission;
  auto o = rec->finished ? recorded_outcome(*rec) : std::nullopt;
  return document(200, {{"id", id},
                        {"state", rec->finished ? finished_word() : enum_word(DeliveryState::running)},
                        {"attempt", s.attempt},
                        {"repo", s.repo},
                        {"remote", s.remote},
                        {"ref", s.ref},
                        {"oid", s.oid},
                        {"transitions", transitions(rec)},
                        {"outcome", o ? outcome_doc(*o, s.remote, s.ref, s.oid) : json(nullptr)}});
}

ApiResponse Api::get_events(const std::string& id, const std::string& query) {
  const auto params = parse_query(query);
  std::uint64_t after = 0;
  if (auto it = params.find("after"); it != params.end()) {
    auto cursor = parse_cursor(it->second);
    if (!cursor) {
      return document(400,
                      {{"error", {{"code", "bad_field"}, {"field", "after"}, {"message", cursor.error().message}}}});
    }
    // A cursor of another generation may name a number that was lost with
    // an unsynced write: the stream starts again from its first event.
    after = resume_after(*cursor, deliveries_.gen());
  }
  ApiResponse r;
  r.content_type = "application/x-ndjson";
  if (auto d = deliveries_.find(id)) {
    r.stream = deliveries_.events(d, after);
    return r;
  }
  // Known to the journal only (finished before this service's memory, by
  // another process, or by recovery after a restart): its transitions as
  // the journal tells them, numbered as the live stream numbered them.
  auto rec = deliveries_.journalled(id);
  if (!rec) {
    return document(404, {{"error", {{"code", "not_found"}, {"field", nullptr}, {"message", "no delivery " + id}}}});
  }
  for (const auto& line : journal_lines(*rec, deliveries_.gen())) {
    if (line.seq > after) r.body += line.text;
  }
  return r;
}

ApiResponse Api::delete_delivery(const std::string& id) {
  RevokeResult rr = deliveries_.revoke(id, "revoked through the service's API");
  const char* result = "stopping";
  switch (rr.kind) {
    case RevokeResult::Kind::not_found:
      return document(404, {{"error", {{"code", "not_found"}, {"field", nullptr}, {"message", "no delivery " + id}}}});
    case RevokeResult::Kind::cancelled_no_dispatch:
      result = "cancelled_no_dispatch";
      break;
    case RevokeResult::Kind::already_finished:
      result = "already_finished";
      break;
    case RevokeResult::Kind::stopping:
      break;
  }
  json outcome = nullptr;
  if (rr.outcome) {
    outcome = rr.delivery ? outcome_doc(*rr.outcome, rr.delivery->remote, rr.delivery->ref, rr.delivery->oid)
                          : outcome_doc(*rr.outcome, "", "", "");
  }
  // The delivery's state now: `stopping` until its stop is confirmed.
  const std::string state = rr.delivery ? rr.delivery->state() : std::string(finished_word());
  return document(200, {{"id", id}, {"result", result}, {"state", state}, {"outcome", outcome}});
}

ApiResponse Api::list(const std::string& query) {
  const auto params = parse_query(query);
  std::string state;
  std::string remote;
  std::size_t limit = 100;
  if (auto it = params.find("state"); it != params.end()) {
    state = it->second;
    if (!enum_from_word<DeliveryState>(state)) {
      return document(400, {{"error", {{"code", "bad_field"}, {"field", "state"}, {"message", state_words()}}}});
    }
  }
  if (auto it = params.find("remote"); it != params.end()) {
    auto parsed = wire::parse_remote(it->second);
    if (!parsed) {
      return document(400,
                      {{"error", {{"code", "bad_remote"}, {"field", "remote"}, {"message", parsed.error().message}}}});
    }
    remote = parsed->canonical;
  }
  if (auto it = params.find("limit"); it != params.end()) {
    auto n = number(it->second);
    if (!n || *n == 0 || *n > 10000) {
      return document(400,
                      {{"error", {{"code", "bad_field"}, {"field", "limit"}, {"message", "\"limit\" is 1 to 10000"}}}});
    }
    limit = static_cast<std::size_t>(*n);
  }
  json out = json::array();
  for (const auto& d : deliveries_.list(state, remote, limit)) {
    auto o = d->outcome();
    out.push_back({{"id", d->id},
                   {"state", d->state()},
                   {"remote", d->remote},
                   {"ref", d->ref},
                   {"oid", d->oid},
                   {"outcome", o ? json(outcome_name(o->kind)) : json(nullptr)},
                   {"remote_effect", o ? json(remote_effect_name(o->remote_effect)) : json(nullptr)}});
  }
  return document(200, {{"deliveries", out}});
}

ApiResponse Api::health() {
  const Gauges g = deliveries_.gauges();
  return document(200, {{"status", deliveries_.draining() ? "draining" : "ok"},
                        {"live", g.live},
                        {"queued", g.queued},
                        {"warm_ready", g.warm_ready}});
}

}  // namespace courier::service
