// outcome_json.cpp — the outcome document (see the header): the encoder
// `push --json` and the service print, its decoder for `push --via`, and
// the journal's form of the same outcome.
#include "report/outcome_json.hpp"

#include <cmath>

#include "sys/clock.hpp"
#include "wire/json.hpp"
#include "wire/json_fields.hpp"

namespace courier::report {

using nlohmann::json;

namespace {

std::int64_t ms(sys::MonoNs from, sys::MonoNs to) {
  if (from == 0 || to == 0 || to < from) return 0;
  return (to - from) / sys::kNsPerMs;
}

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json timings_json(const Outcome& o) {
  const auto& t = o.timings;
  const sys::MonoNs end = t.confirmed != 0 ? t.confirmed : sys::mono_now_ns();
  return {
      {"total", ms(t.submitted, end)},
      {"pending", ms(t.submitted, t.seat != 0 ? t.seat : end)},
      {"spawn", ms(t.spawned != 0 ? t.seat : 0, t.hello)},
      {"advertise", o.advertise_ms.value_or(0)},
      {"pack", o.pack_ms.value_or(0)},
      {"upload", o.upload_ms.value_or(0)},
      {"stop_confirm", ms(t.kill != 0 ? t.kill : t.exited, t.confirmed)},
      {"revoke", t.revoke != 0 ? json(ms(t.submitted, t.revoke)) : json(nullptr)},
  };
}

json child_json(const Outcome& o) {
  if (!o.dispatched) return nullptr;
  json child;
  child["pid"] = o.child.pid;
  child["exit_code"] = or_null(o.child.exit_code);
  child["signal"] = or_null(o.child.signal);
  child["reaped"] = o.child.reaped;
  child["eof"] = o.child.stdout_eof && o.child.stderr_eof;
  // What a confirmed stop covers: every descendant (this process was a child
  // subreaper, orphans were looked for and killed) or only the kill domain.
  child["stop_scope"] = o.child.subreaped ? "descendants" : "kill_domain";
  return child;
}

json observed_json(const std::optional<ObservedAfter>& observed) {
  if (!observed) return nullptr;
  const auto& seen = *observed;
  return {{"oid", or_null(seen.oid)},
          {"at_unix_ms", seen.at_unix_ms},
          {"matches_this_delivery", seen.matches_this_delivery},
          {"error", or_null(seen.error)}};
}

// Every ref of the delivery in the request's order, as git's push summary
// would name it: {ref, oid (the zero id: a deletion), old_oid (null: not
// known), status, reason (null: none), remote_effect (J2 per ref)}, plus
// observed_after for a ref recovery read back. The same form in the
// document and in the journal's record.
json refs_json(const Outcome& o) {
  json refs = json::array();
  for (const RefOutcome& r : o.refs) {
    json one = {{"ref", r.ref},
                {"oid", r.oid},
                {"old_oid", or_null(r.old_oid)},
                {"status", std::string(enum_word(r.status))},
                {"reason", or_null(r.reason)},
                {"remote_effect", remote_effect_name(r.remote_effect)}};
    if (r.observed_after) one["observed_after"] = observed_json(r.observed_after);
    refs.push_back(std::move(one));
  }
  return refs;
}

}  // namespace

json outcome_to_json(const Outcome& o, const OutcomeFacts& f) {
  json j;
  j["outcome"] = outcome_name(o.kind);
  j["seat"] = o.seat() == SeatDisposition::release ? "released" : "retained";
  j["remote"] = f.remote;
  j["ref"] = f.ref;
  j["oid"] = f.oid;
  j["old_oid"] = or_null(o.old_oid);
  j["reason"] = o.reason;
  j["hint"] = f.hint && !f.hint->empty() ? json(*f.hint) : json(nullptr);
  // The remote's own words (hook output), oldest first; capped (see
  // Outcome::remote_messages): remote_messages_dropped counts what the cap
  // left out.
  j["remote_messages"] = o.remote_messages;
  j["remote_messages_dropped"] = o.remote_messages_dropped;
  j["objects"] = o.objects.value_or(0);
  // "libgit2" or "git": the engine that built the pack; null when none was
  // begun (up to date, or stopped before the pack).
  j["pack_engine"] = or_null(o.pack_engine);
  // Always present: null only when not known (a delivery finished by
  // recovery after its POST began).
  j["bytes_sent"] = or_null(o.bytes_sent);
  // A replayed outcome (J4) ran nothing now: it has no child and no
  // timings of its own, and says none rather than zeros (the attempt that
  // ran has them in the journal: `git-courier show`).
  j["timings_ms"] = o.replayed ? json(nullptr) : timings_json(o);
  j["child"] = o.replayed ? json(nullptr) : child_json(o);
  j["delivery_id"] = o.delivery_id;
  j["attempt"] = o.attempt;
  j["remote_effect"] = remote_effect_name(o.remote_effect);
  j["kill_domain"] = or_null(o.kill_domain);
  j["replayed"] = o.replayed;
  j["revoke_cause"] = or_null(o.revoke_cause);
  j["revoked_by"] = o.revoked_by ? json(revoke_cause_name(*o.revoked_by)) : json(nullptr);
  j["revoke_unjournalled"] = o.revoke_unjournalled;
  j["stop_failure"] = o.stop_failure ? json(outcome_name(*o.stop_failure)) : json(nullptr);
  j["scratch_kept"] = or_null(o.scratch_kept);
  j["journal_error"] = or_null(o.journal_error);
  j["observed_after"] = observed_json(o.observed_after);
  j["refs"] = refs_json(o);
  if (auto over = o.deadline_overrun()) j["deadline_overrun_ms"] = static_cast<double>(*over) / 1e6;
  return j;
}

std::string outcome_json(const Outcome& o, const OutcomeFacts& facts) {
  return outcome_to_json(o, facts).dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

using Fields = wire::JsonFields;

// An arbitrary origin for the synthetic instants: far from 0, which means
// "never" in Timings.
constexpr sys::MonoNs kOrigin = 1'000'000LL * 1000 * sys::kNsPerMs;

sys::MonoNs after(sys::MonoNs from, std::int64_t millis) { return from + millis * sys::kNsPerMs; }

// Instants that give back the document's durations (timings_json) and its
// deadline overrun: submitted at the origin, confirmed `total` later, the
// stop's start (the kill, else the exit) `stop_confirm` before that.
void decode_timings(Fields& top, const std::optional<double>& overrun_ms, Outcome& o) {
  const json* tj = top.object("timings_ms", true);  // null: a replayed outcome
  if (!tj) return;
  Fields r(*tj, top.where() + ".timings_ms", top.errors());
  auto& t = o.timings;
  t.submitted = kOrigin;
  t.confirmed = after(kOrigin, r.integer("total"));
  t.seat = after(kOrigin, r.integer("pending"));
  if (const std::int64_t spawn = r.integer("spawn"); spawn > 0) {
    t.spawned = t.seat;
    t.hello = after(t.seat, spawn);
  }
  o.advertise_ms = r.count("advertise");
  o.pack_ms = r.count("pack");
  o.upload_ms = r.count("upload");
  const sys::MonoNs stop_from = after(t.confirmed, -r.integer("stop_confirm"));
  if (overrun_ms && o.kind == OutcomeKind::deadline_killed) {
    t.kill = stop_from;
    o.deadline = t.kill - std::llround(*overrun_ms * 1e6);
  } else if (stop_from != t.confirmed) {
    t.exited = stop_from;
  }
  if (auto revoke = r.opt_int("revoke")) t.revoke = after(kOrigin, *revoke);
}

void decode_child(Fields& top, Outcome& o) {
  const json* cj = top.object("child", true);
  o.dispatched = cj != nullptr;
  if (!cj) return;
  Fields r(*cj, top.where() + ".child", top.errors());
  o.child.pid = r.integer("pid");
  if (auto code = r.opt_int("exit_code")) o.child.exit_code = static_cast<int>(*code);
  if (auto sig = r.opt_int("signal")) o.child.signal = static_cast<int>(*sig);
  o.child.reaped = r.boolean("reaped");
  o.child.stdout_eof = o.child.stderr_eof = r.boolean("eof");
  o.child.subreaped = r.str("stop_scope") == "descendants";
}

// observed_after in either form: the document's (absent text is null) and
// the journal's (absent text is "").
std::optional<ObservedAfter> decode_observed(Fields& top) {
  const json* oj = top.object("observed_after", true);
  if (!oj) return std::nullopt;
  Fields r(*oj, top.where() + ".observed_after", top.errors(), top.mode());
  ObservedAfter seen;
  seen.oid = r.opt_str("oid").value_or("");
  seen.at_unix_ms = r.integer("at_unix_ms");
  seen.matches_this_delivery = r.boolean("matches_this_delivery");
  seen.error = r.opt_str("error").value_or("");
  return seen;
}

// The refs array (absent: a document or record written before refs
// existed; the caller fills them from what it knows).
std::vector<RefOutcome> decode_refs(Fields& top) {
  std::vector<RefOutcome> out;
  const json* arr = top.field("refs", true);
  if (!arr) return out;
  if (!arr->is_array()) {
    top.problem(top.where() + ".refs is not an array");
    return out;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string where = top.where() + ".refs[" + std::to_string(i) + "]";
    if (!(*arr)[i].is_object()) {
      top.problem(where + " is not an object");
      continue;
    }
    Fields r((*arr)[i], where, top.errors(), top.mode());
    RefOutcome one;
    one.ref = r.str("ref");
    one.oid = r.str("oid");
    one.old_oid = r.opt_str("old_oid");
    one.status = r.named("status", enum_from_word<RefStatus>, RefStatus::unknown);
    one.reason = r.opt_str("reason").value_or("");
    one.remote_effect = r.named("remote_effect", remote_effect_from_name, RemoteEffect::possible);
    one.observed_after = decode_observed(r);
    out.push_back(std::move(one));
  }
  return out;
}

std::optional<double> decode_overrun(Fields& r) {
  const json* v = r.field("deadline_overrun_ms", true);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    r.problem(r.where() + ".deadline_overrun_ms is not a number");
    return std::nullopt;
  }
  return v->get<double>();
}

void decode_fields(Fields& r, Outcome& o) {
  o.old_oid = r.opt_str("old_oid");
  o.reason = r.str("reason");
  o.remote_messages = r.strings("remote_messages");
  o.remote_messages_dropped = r.count("remote_messages_dropped");
  o.objects = r.count("objects");
  o.pack_engine = r.opt_str("pack_engine");
  o.bytes_sent = r.opt_count("bytes_sent");
  o.delivery_id = r.str("delivery_id");
  o.attempt = static_cast<int>(r.integer("attempt"));
  o.remote_effect = r.named("remote_effect", remote_effect_from_name, RemoteEffect::possible);
  o.kill_domain = r.opt_str("kill_domain").value_or("");
  o.replayed = r.boolean("replayed");
  o.revoke_cause = r.opt_str("revoke_cause").value_or("");
  if (r.opt_str("revoked_by")) o.revoked_by = r.named("revoked_by", revoke_cause_from_name, RevokeCause::caller);
  o.revoke_unjournalled = r.boolean("revoke_unjournalled");
  if (r.opt_str("stop_failure")) o.stop_failure = r.named("stop_failure", outcome_from_name, OutcomeKind::unreaped);
  o.scratch_kept = r.opt_str("scratch_kept").value_or("");
  o.journal_error = r.opt_str("journal_error").value_or("");
}

}  // namespace

Result<DecodedOutcome> outcome_from_json(const json& doc) {
  std::string error;
  Fields r(doc, "outcome", error);
  DecodedOutcome d;
  Outcome& o = d.outcome;
  o.kind = r.named("outcome", outcome_from_name, OutcomeKind::failed);
  d.facts.remote = r.str("remote");
  d.facts.ref = r.str("ref");
  d.facts.oid = r.str("oid");
  d.facts.hint = r.opt_str("hint");
  decode_fields(r, o);
  decode_timings(r, decode_overrun(r), o);
  decode_child(r, o);
  o.observed_after = decode_observed(r);
  o.refs = decode_refs(r);
  if (!error.empty()) return fail(Errc::invalid_argument, "the outcome document: " + error);
  return d;
}

Result<DecodedOutcome> outcome_from_json(std::string_view text) {
  auto doc = wire::parse_json(text, "the outcome document");
  if (!doc && doc.error().code == Errc::malformed_json) {
    return fail(Errc::invalid_argument, "the outcome document is not JSON");
  }
  if (!doc) return fail(Errc::invalid_argument, doc.error().message);  // too large, too deep, a key twice
  return outcome_from_json(*doc);
}

// ---- the journal's form ---------------------------------------------------------

std::string outcome_record(const Outcome& o) {
  json j = {{"kind", outcome_name(o.kind)},
            {"reason", o.reason},
            {"delivery_id", o.delivery_id},
            {"attempt", o.attempt},
            {"remote_effect", remote_effect_name(o.remote_effect)},
            {"kill_domain", o.kill_domain},
            {"revoke_cause", o.revoke_cause},
            {"revoke_unjournalled", o.revoke_unjournalled},
            {"scratch_kept", o.scratch_kept},
            {"journal_error", o.journal_error},
            {"dispatched", o.dispatched}};
  if (o.old_oid) j["old_oid"] = *o.old_oid;
  if (o.objects) j["objects"] = *o.objects;
  if (o.bytes_sent) j["bytes_sent"] = *o.bytes_sent;
  if (o.stop_failure) j["stop_failure"] = outcome_name(*o.stop_failure);
  if (o.revoked_by) j["revoked_by"] = revoke_cause_name(*o.revoked_by);
  if (o.child.pid != 0) j["child"] = json{{"pid", o.child.pid}};
  if (o.observed_after) {
    const auto& seen = *o.observed_after;
    j["observed_after"] = json{{"oid", seen.oid},
                               {"at_unix_ms", seen.at_unix_ms},
                               {"matches_this_delivery", seen.matches_this_delivery},
                               {"error", seen.error}};
  }
  if (!o.refs.empty()) j["refs"] = refs_json(o);
  // Text from elsewhere (a remote's reason) may hold invalid UTF-8: replaced, never thrown.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Outcome> outcome_from_record(std::string_view detail) {
  auto doc = wire::parse_json(detail, "it");
  if (!doc) return fail(Errc::invalid_argument, doc.error().message);
  if (!doc->is_object()) return fail(Errc::invalid_argument, "not a JSON object");
  // A row may have been written by an older or newer version: what it
  // lacks reads as the default; only the kind and the effect must be known.
  std::string ignored;
  Fields r(*doc, "it", ignored, Fields::Mode::lenient);
  const std::string kind_word = r.opt_str("kind").value_or("");
  const auto kind = outcome_from_name(kind_word);
  if (!kind) return fail(Errc::invalid_argument, "no known kind ('" + kind_word + "')");
  const std::string effect_word = r.opt_str("remote_effect").value_or("");
  const auto effect = remote_effect_from_name(effect_word);
  if (!effect) return fail(Errc::invalid_argument, "no known remote_effect ('" + effect_word + "')");
  Outcome o;
  o.kind = *kind;
  o.remote_effect = *effect;
  o.reason = r.opt_str("reason").value_or("");
  o.delivery_id = r.opt_str("delivery_id").value_or("");
  o.attempt = static_cast<int>(r.integer("attempt"));
  o.old_oid = r.opt_str("old_oid");
  o.objects = r.opt_count("objects");
  o.bytes_sent = r.opt_count("bytes_sent");
  o.kill_domain = r.opt_str("kill_domain").value_or("");
  if (const auto failure = r.opt_str("stop_failure")) o.stop_failure = outcome_from_name(*failure);
  o.revoke_cause = r.opt_str("revoke_cause").value_or("");
  const std::string revoked_by = r.opt_str("revoked_by").value_or("");
  if (!o.revoke_cause.empty() || !revoked_by.empty()) o.revoked_by = revoke_cause_in(revoked_by, o.revoke_cause);
  o.revoke_unjournalled = r.boolean("revoke_unjournalled");
  o.scratch_kept = r.opt_str("scratch_kept").value_or("");
  o.journal_error = r.opt_str("journal_error").value_or("");
  o.dispatched = r.boolean("dispatched");
  if (const json* child = r.object("child", true)) {
    Fields c(*child, "it.child", ignored, Fields::Mode::lenient);
    o.child.pid = c.integer("pid");
  }
  o.observed_after = decode_observed(r);
  o.refs = decode_refs(r);
  return o;
}

RevokeCause revoke_cause_in(const std::string& name, const std::string& words) {
  if (auto named = revoke_cause_from_name(name)) return *named;
  // Written before causes were named: the words of a lost lease and of
  // authority begin with their cause, the executor's shutdown says so, and
  // anything else came from a caller.
  if (words.rfind(kLeaseLostCause, 0) == 0) return RevokeCause::lease_lost;
  if (words.rfind("authority", 0) == 0) return RevokeCause::authority;
  if (words.find("shutting down") != std::string::npos) return RevokeCause::shutdown;
  return RevokeCause::caller;
}

}  // namespace courier::report
