// outcome_json.cpp — the outcome's JSON document (push --json, the API's
// "outcome").
#include "service/outcome_json.hpp"

#include "sys/clock.hpp"

namespace courier::service {

namespace {

std::int64_t ms(sys::MonoNs from, sys::MonoNs to) {
  if (from == 0 || to == 0 || to < from) return 0;
  return (to - from) / sys::kNsPerMs;
}

}  // namespace

nlohmann::json outcome_json(const Outcome& o, const OutcomeFacts& f) {
  using nlohmann::json;
  json j;
  j["outcome"] = outcome_name(o.kind);
  j["seat"] = o.seat() == SeatDisposition::release ? "released" : "retained";
  j["remote"] = f.remote;
  j["ref"] = f.ref;
  j["oid"] = f.oid;
  j["old_oid"] = o.old_oid ? json(*o.old_oid) : json(nullptr);
  j["reason"] = o.reason;
  j["hint"] = f.hint.empty() ? json(nullptr) : json(f.hint);
  // The remote's own words (hook output), oldest first; capped (see
  // Outcome::remote_messages): remote_messages_dropped counts what the cap
  // left out.
  j["remote_messages"] = o.remote_messages;
  j["remote_messages_dropped"] = o.remote_messages_dropped;
  j["objects"] = o.objects.value_or(0);
  // "libgit2" or "git": the engine that built the pack; null when none was
  // begun (up to date, or stopped before the pack).
  j["pack_engine"] = o.pack_engine ? json(*o.pack_engine) : json(nullptr);
  // Always present: null only when not known (a delivery finished by
  // recovery after its POST began).
  j["bytes_sent"] = o.bytes_sent ? json(*o.bytes_sent) : json(nullptr);
  const auto& t = o.timings;
  const sys::MonoNs end = t.confirmed != 0 ? t.confirmed : sys::mono_now_ns();
  j["timings_ms"] = {
      {"total", ms(t.submitted, end)},
      {"pending", ms(t.submitted, t.seat != 0 ? t.seat : end)},
      {"spawn", ms(t.spawned != 0 ? t.seat : 0, t.hello)},
      {"advertise", o.advertise_ms.value_or(0)},
      {"pack", o.pack_ms.value_or(0)},
      {"upload", o.upload_ms.value_or(0)},
      {"stop_confirm", ms(t.kill != 0 ? t.kill : t.exited, t.confirmed)},
      {"revoke", t.revoke != 0 ? json(ms(t.submitted, t.revoke)) : json(nullptr)},
  };
  json child;
  child["pid"] = o.child.pid;
  child["exit_code"] = o.child.exit_code ? json(*o.child.exit_code) : json(nullptr);
  child["signal"] = o.child.signal ? json(*o.child.signal) : json(nullptr);
  child["reaped"] = o.child.reaped;
  child["eof"] = o.child.stdout_eof && o.child.stderr_eof;
  // What a confirmed stop covers: every descendant (this process was a child
  // subreaper, orphans were looked for and killed) or only the kill domain.
  child["stop_scope"] = o.child.subreaped ? "descendants" : "kill_domain";
  j["child"] = o.dispatched ? child : json(nullptr);
  j["delivery_id"] = o.delivery_id;
  j["attempt"] = o.attempt;
  j["remote_effect"] = remote_effect_name(o.remote_effect);
  j["kill_domain"] = o.kill_domain.empty() ? json(nullptr) : json(o.kill_domain);
  j["replayed"] = o.replayed;
  j["revoke_cause"] = o.revoke_cause.empty() ? json(nullptr) : json(o.revoke_cause);
  j["stop_failure"] = o.stop_failure ? json(outcome_name(*o.stop_failure)) : json(nullptr);
  j["scratch_kept"] = o.scratch_kept.empty() ? json(nullptr) : json(o.scratch_kept);
  j["journal_error"] = o.journal_error.empty() ? json(nullptr) : json(o.journal_error);
  if (o.observed_after) {
    const auto& seen = *o.observed_after;
    j["observed_after"] = {{"oid", seen.oid.empty() ? json(nullptr) : json(seen.oid)},
                           {"at_unix_ms", seen.at_unix_ms},
                           {"matches_this_delivery", seen.matches_this_delivery},
                           {"error", seen.error.empty() ? json(nullptr) : json(seen.error)}};
  } else {
    j["observed_after"] = nullptr;
  }
  if (auto over = o.deadline_overrun()) j["deadline_overrun_ms"] = static_cast<double>(*over) / 1e6;
  return j;
}

}  // namespace courier::service
