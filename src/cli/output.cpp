// output.cpp — exit codes, the human line and the --json report.
#include "cli/output.hpp"

#include <ctime>

#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/command_clock.hpp"
#include "report/outcome_json.hpp"
#include "seat/admission.hpp"

namespace courier::cli {

int exit_code_for(OutcomeKind kind) { return exit_value(outcome_row(kind).exit); }

namespace {

std::string short_id(const std::string& oid) { return oid.substr(0, 12); }

// 40 zeros: no such ref (X-OUT1: said as absent, never as an id).
bool is_absent(const std::string& oid) { return oid.empty() || oid.find_first_not_of('0') == std::string::npos; }

}  // namespace

std::string human_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string observed_line(const ObservedAfter& seen) {
  if (!seen.error.empty()) return "read-back failed: " + seen.error;
  const bool absent = is_absent(seen.oid);
  const std::string what = absent ? "absent" : short_id(seen.oid);
  return "read-back at " + human_time(seen.at_unix_ms) + ": the remote's ref was " + what +
         (seen.matches_this_delivery ? ", this delivery's object (it may also have come from another delivery)"
          : absent                   ? ""
                                     : ", not this delivery's object");
}

std::string interrupted_phase(const Outcome& o) {
  if (!o.dispatched) return o.timings.seat == 0 ? "waiting for the lane" : "before the child started";
  if (o.timings.post_started != 0) return "the upload (the POST had begun)";
  if (o.pack_ms || o.advertise_ms) return "packing objects";
  if (o.timings.job_accepted != 0) return "the ref advertisement";
  return "the child's start";
}

namespace {

// What the remote may have done, for people: every `possible` says what to
// do, by the id table's row for this outcome (seat::id_table_row, J4).
std::string effect_advice(const Outcome& o, const DeliveryFacts& f) {
  if (o.remote_effect != RemoteEffect::possible) return "";
  // Over ssh no read-back is made by default (docs/operations.md "SSH
  // remotes"): the ref is checked with git's own ssh.
  const bool ssh = f.remote.rfind("ssh://", 0) == 0;
  const std::string head =
      ssh ? ". The remote may have applied it (the update commands had been sent and no answer was read): check " +
                f.ref + " with git ls-remote " + f.remote + " " + f.ref
          : ". The remote may have applied it (the POST had begun and no answer was read): check " + f.ref + " at " +
                f.remote;
  const std::string old = !o.old_oid              ? std::string()
                          : is_absent(*o.old_oid) ? ", the ref absent"
                                                  : " " + short_id(*o.old_oid);
  switch (seat::id_table_row(o, false)) {
    case seat::SameIdAgain::Action::compare_and_swap:
      return head + ", or deliver again with the same --delivery-id " + o.delivery_id +
             " (a compare-and-swap on the old id" + old + ") rather than a new push";
    case seat::SameIdAgain::Action::refuse:
      return head + "; the same --delivery-id is refused until `git-courier recover` confirms the stop";
    default:
      break;
  }
  return head + "; the cancellation is final: a new attempt needs a new --delivery-id" +
         (o.old_oid ? " (with --expect-old " + *o.old_oid + ")" : std::string());
}

std::string human_kind_line(const Outcome& o, const DeliveryFacts& f);

}  // namespace

std::string human_line(const Outcome& o, const DeliveryFacts& f) {
  std::string line = human_kind_line(o, f);
  if (o.replayed) line = "already done (delivery " + o.delivery_id + ", from the journal; nothing sent now): " + line;
  line += effect_advice(o, f);
  if (!o.journal_error.empty()) line += " [journal: " + o.journal_error + "]";
  return line;
}

namespace {

// A delivery of several refs, for people: what became of the whole (the
// refs' own lines say each).
std::optional<std::string> set_line(const Outcome& o, const DeliveryFacts& f) {
  if (f.asked.size() < 2) return std::nullopt;
  const std::string count = std::to_string(f.asked.size()) + " refs at " + f.remote;
  std::size_t moved = 0;
  for (const auto& r : o.refs) moved += r.status == RefStatus::ok ? 1 : 0;
  switch (o.kind) {
    case OutcomeKind::delivered:
      return "delivered " + count + " (" + std::to_string(o.objects.value_or(0)) + " objects)";
    case OutcomeKind::up_to_date:
      return "up to date: " + count + " are already at their ids";
    case OutcomeKind::rejected:
      // The refs say what moved: a non-atomic delivery is partly applied
      // when any of its refs is ok, whatever the whole's effect word.
      if (moved > 0 || o.remote_effect == RemoteEffect::mixed) {
        return "partly applied (non-atomic): " + std::to_string(moved) + " of " + count +
               " moved, the others did not (see each ref above): " + o.reason;
      }
      if (o.remote_effect == RemoteEffect::refused)
        return "rejected by the remote, no ref moved: " + count + ": " + o.reason;
      return "rejected (nothing sent, no ref moved): " + count + ": " + o.reason;
    default:
      return std::nullopt;
  }
}

std::string human_kind_line(const Outcome& o, const DeliveryFacts& f) {
  const std::string where = f.ref + " at " + f.remote;
  if (auto set = set_line(o, f)) return *set;
  if (is_unconfirmed(o.kind)) {
    return std::string("UNCONFIRMED (") + outcome_name(o.kind) + "): " + o.reason +
           (o.scratch_kept.empty() ? "" : ". Its scratch directory " + o.scratch_kept + " is kept") +
           ". The lane lock stays held while anything of the child may live. Check for processes of process "
           "group " +
           std::to_string(o.child.pid) + " (ps -o pid,pgid,args -g " + std::to_string(o.child.pid) +
           ") and kill them; see docs/operations.md";
  }
  switch (o.kind) {
    case OutcomeKind::delivered:
      if (is_absent(f.oid)) return "deleted " + where + " (was " + short_id(o.old_oid.value_or("?")) + ")";
      return "delivered " + short_id(f.oid) + " to " + where +
             (o.old_oid && is_absent(*o.old_oid) ? " (a new ref" : " (was " + short_id(o.old_oid.value_or("?"))) +
             (f.forced ? ", forced update" : "") + ", " + std::to_string(o.objects.value_or(0)) + " objects)";
    case OutcomeKind::up_to_date:
      return "up to date: " + where + " is already " + short_id(f.oid);
    case OutcomeKind::rejected:
      // Only the remote's own `ng` is its rejection; a move refused here,
      // from the advertisement (fast-forward, lease), sent nothing.
      if (o.remote_effect == RemoteEffect::refused) return "rejected by the remote: " + where + ": " + o.reason;
      return "rejected (nothing sent): " + where + ": " + o.reason;
    case OutcomeKind::cancelled_no_dispatch:
      return "cancelled before anything was sent (no child was started): " + o.reason;
    case OutcomeKind::revoked:
      return std::string("revoked: the child was killed and its stop confirmed") +
             (o.remote_effect == RemoteEffect::none ? "; nothing had been sent that the remote could apply" : "");
    case OutcomeKind::deadline_killed: {
      std::string s = "deadline reached during " + interrupted_phase(o) + ": " + o.reason;
      if (auto over = o.deadline_overrun()) s += " (kill " + std::to_string(*over / 1000) + " us after the deadline)";
      return s;
    }
    default:
      return std::string(outcome_name(o.kind)) + ": " + o.reason;
  }
}

}  // namespace

std::string hint_for(const Outcome& o, const DeliveryFacts& f) {
  if (f.hint) return *f.hint;
  if (o.kind != OutcomeKind::auth_failed) return "";
  const std::string& auth = f.auth;
  const bool forbidden = o.reason.find("answered 403") != std::string::npos;
  if (auth.empty() || auth == "none") {
    return "the remote wants credentials and --auth none sent none: use --auth credential (git's credential "
           "helpers, as git push does), --auth bearer:FILE (a token in a file) or --auth key:FILE (a signed "
           "per-request token)";
  }
  const std::string which = "--auth " + auth;
  if (forbidden) {
    // git keeps a credential a 403 answered (it rejects only on 401): so
    // does --auth credential, and the hint says so.
    return "the remote accepted who you are but refused the push (403) with " + which +
           ": the account lacks rights on " + f.remote + "; ask for push access" +
           (auth == "credential" ? " (the stored credential was kept)" : "");
  }
  if (auth == "credential") {
    return "the remote refused the credential git's credential helper gave for " + f.remote + " (" + which +
           "): check the user name and token stored for this host (`git credential fill`), "
           "or put the user name in the URL";
  }
  if (auth.rfind("key:", 0) == 0) {
    return "the remote refused the token signed with " + auth.substr(4) + " (" + which +
           "): check that the server trusts this key's public key (git-courier keygen prints it) for this "
           "repository, and that its clock agrees with this host's";
  }
  if (auth.rfind("bearer:", 0) == 0) {
    return "the remote refused the token in " + auth.substr(7) + " (" + which +
           "): check that it has not expired and may push to this repository";
  }
  return "the remote refused the credential from " + which;
}

std::string json_usage(const std::string& message) {
  nlohmann::json j;
  j["outcome"] = "usage";
  j["message"] = message;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_usage(const std::string& message, const FieldErrors& errors) {
  nlohmann::json j;
  j["outcome"] = "usage";
  j["message"] = message;
  j["errors"] = nlohmann::json::array();
  for (const auto& e : errors) j["errors"].push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_service_unavailable(const std::string& message, std::optional<long> retry_after) {
  nlohmann::json j;
  j["outcome"] = "service_unavailable";
  j["message"] = message;
  j["retry_after"] = retry_after ? nlohmann::json(*retry_after) : nlohmann::json(nullptr);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_service_mismatch(const std::string& message) {
  nlohmann::json j;
  j["outcome"] = "service_mismatch";
  j["message"] = message;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_report(const Outcome& o, const DeliveryFacts& f) {
  nlohmann::json j = report::outcome_to_json(o, report::OutcomeFacts{f.remote, f.ref, f.oid, hint_for(o, f)});
  // A delivery run by this process: its instants, the command's beside the
  // delivery's. One told by a service (--via) has the same fields, this one
  // null: this process did not see the delivery's instants.
  j["instants_ns"] = command_clock().outcome != 0 ? instants_json(o) : nlohmann::json(nullptr);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace courier::cli
