// journal_cmd.cpp — `git-courier log`, `show ID` and `recover`, the default
// journal path, and the CLI's read-back.
#include "cli/journal_cmd.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "auth/auth_setup.hpp"
#include "cli/output.hpp"
#include "sys/lazy_library.hpp"
#include "sys/process.hpp"
#include "sys/state_paths.hpp"
#include "journal/journal.hpp"
#include "seat/admission.hpp"
#include "state/state_url.hpp"
#include "transport/http_leg.hpp"
#include "transport/read_back.hpp"
#include "wire/json.hpp"
#include "wire/legs.hpp"
#include "wire/proxy.hpp"
#include "wire/text.hpp"

namespace courier::cli {

namespace {

using nlohmann::json;

int journal_error(const std::string& message) {
  std::fprintf(stderr, "git-courier: %s\n", message.c_str());
  return kExitFailed;
}

// 2026-12-01T12:00:00.123Z
std::string iso_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

// A detail as JSON (an object; text that is not one, or that the bounded
// reader refuses — a row of the shared database may be hostile — is kept
// as a string).
json detail_json(const std::string& detail) {
  auto j = wire::parse_json(detail, "the entry's detail");
  return j ? std::move(*j) : json(detail);
}

// The state a record is in: its outcome when finished, else its last step.
std::string state_of(const journal::Record& r, std::string& effect) {
  effect.assign(1, '-');
  const auto latest = r.latest();
  if (latest.empty()) return "unknown";
  if (r.finished) {
    if (auto done = r.last(journal::Step::finished)) {
      effect = journal::detail_text(done->detail, "remote_effect");
      return journal::detail_text(done->detail, "kind");
    }
  }
  return std::string("in flight: ") + journal::step_name(latest.back().step);
}

// What submitting the same id would do now (J4, DESIGN §6), as the one
// place that decides it says; an unfinished one is in flight, or left for
// recovery by a process that is gone.
std::pair<std::string, std::string> same_id_now(const journal::Record& r) {
  if (!r.finished) {
    return {"refuse",
            "not finished: refused while it is in flight; if its process is gone, `git-courier recover` "
            "finishes it first"};
  }
  const seat::SameIdAgain again = seat::same_id_again(r);
  switch (again.action) {
    case seat::SameIdAgain::Action::replay:
      return {"replay", again.why};
    case seat::SameIdAgain::Action::run:
      return {"run", again.why};
    case seat::SameIdAgain::Action::compare_and_swap:
      return {"compare_and_swap", again.why};
    case seat::SameIdAgain::Action::refuse:
      break;
  }
  return {"refuse", again.why};
}

// The refs a delivery names, for a line: the one ref, or the first and how
// many more.
std::string refs_label(const journal::Submission& s) {
  const std::string first = wire::printable(s.ref, 200);
  if (s.updates.size() <= 1) return first;
  return first + " (+" + std::to_string(s.updates.size() - 1) + " more)";
}

// Each ref of an outcome as git's summary names it: "  <ref>: <status>
// (<remote_effect>)[: <reason>]", and a read-back recovery made of it.
void print_ref_lines(const Outcome& o) {
  if (o.refs.size() < 2) return;
  for (const RefOutcome& r : o.refs) {
    std::printf("  %s: %s (%s)%s%s\n", wire::printable(r.ref, 200).c_str(), std::string(enum_word(r.status)).c_str(),
                remote_effect_name(r.remote_effect), r.reason.empty() ? "" : ": ",
                wire::printable(r.reason, 500).c_str());
    if (r.observed_after) std::printf("    %s\n", observed_line(*r.observed_after).c_str());
  }
}

json record_json(const journal::Record& r, bool entries) {
  std::string effect;
  json j{{"id", r.submission.id},
         {"attempt", r.submission.attempt},
         {"repo", r.submission.repo},
         {"remote", r.submission.remote},
         {"ref", r.submission.ref},
         {"oid", r.submission.oid},
         {"expect_old", r.submission.expect_old ? json(*r.submission.expect_old) : json(nullptr)},
         {"submitter_pid", r.submission.submitter.pid},
         {"deadline", iso_time(r.submission.deadline_unix_ms)},
         {"finished", r.finished},
         {"state", state_of(r, effect)},
         {"remote_effect", effect}};
  // The host that submitted it, in a fleet's shared journal (absent when none was recorded).
  if (!r.submission.host.empty()) j["host"] = r.submission.host;
  // The whole set (absent for a row written before sets were recorded).
  if (!r.submission.legacy_set) j["request"] = detail_json(journal::request_detail(r.submission));
  if (auto done = r.last(journal::Step::finished)) j["outcome"] = detail_json(done->detail);
  if (entries) {
    const auto [action, why] = same_id_now(r);
    j["same_id_again"] = {{"action", action}, {"why", why}};
    json list = json::array();
    for (const auto& e : r.entries) {
      list.push_back({{"step", journal::step_name(e.step)},
                      {"attempt", e.attempt},
                      {"at", iso_time(e.at_unix_ms)},
                      {"detail", detail_json(e.detail)}});
    }
    j["transitions"] = std::move(list);
  }
  return j;
}

// X-RO1: log and show read the journal; they never create it, its
// directory or its schema.
Result<std::unique_ptr<journal::Journal>> open_for(const JournalArgs& a) {
  if (a.state) {
    auto url = state::parse_state_url(*a.state);
    if (!url) return tl::unexpected(url.error());
    if (url->kind == state::StateUrl::Kind::sqlite) return journal::open_sqlite_read_only(url->path);
    return journal::open_state(*url, "git-courier/" + sys::host_name() + "/" + std::to_string(sys::self_pid()));
  }
  auto path = journal_path(a.journal);
  if (!path) return tl::unexpected(path.error());
  return journal::open_sqlite_read_only(*path);
}

// An entry's detail for people: its JSON text as written, which already
// escapes what it holds (a second escaping would double every backslash),
// made safe for a terminal and cut at kShownDetail bytes.
constexpr std::size_t kShownDetail = 2000;
std::string shown_detail(const std::string& detail) {
  if (detail.size() <= kShownDetail) return wire::terminal_safe(detail);
  return wire::terminal_safe(std::string_view(detail).substr(0, kShownDetail)) + "...";
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

Result<std::string> default_journal_path() { return sys::default_journal_path(); }

Result<std::string> journal_path(const std::optional<std::string>& given) {
  if (given) return *given;
  return default_journal_path();
}

ReadBackFn make_read_back(const std::string& auth, const std::optional<std::string>& ca_file, bool allow_http_loopback,
                          const std::optional<std::string>& proxy) {
  return [auth, ca_file, allow_http_loopback, proxy](const std::string& remote, const std::string& ref) {
    ObservedAfter seen;
    const MonoNs deadline = sys::mono_after_ms(sys::mono_now_ns(), kReadBackBudget.count());
    DeliveryRequest read;
    read.remote = remote;
    read.ref = ref;
    transport::ReadRefOptions o;
    o.remote = remote;
    o.ref = ref;
    o.ca_file = ca_file;
    o.allow_http_loopback = allow_http_loopback;
    o.deadline = deadline;
    if (proxy) {
      auto p = wire::parse_proxy(*proxy);
      if (!p) {
        seen.error = p.error().message;
        return seen;
      }
      o.proxy = p->url;
      o.proxy_authorization = p->authorization;
    }
    auto setup = auth::AuthSetup::from_spec(auth, read, deadline);
    if (!setup) {
      seen.error = setup.error().message;
      return seen;
    }
    if (auto mint = (*setup)->mint()) {
      MintAnswer token = mint(MintRequest{std::string(wire::leg_spec(wire::Leg::advertisement).name), "GET",
                                          wire::leg_url(remote, wire::Leg::advertisement), std::nullopt, std::nullopt});
      if (!token.header) {
        seen.error = "no token for the read-back: " + token.refused;
        return seen;
      }
      o.authorization = token.header;
    }
    if (auto lib = sys::load_shared_library(sys::SharedLibrary::curl); !lib) {
      seen.error = lib.error().message;
      return seen;
    }
    transport::init_transport();
    auto oid = transport::read_ref(o);
    seen.at_unix_ms = journal::wall_now_ms();
    if (oid) {
      seen.oid = *oid;
    } else {
      seen.error = oid.error().message;
    }
    return seen;
  };
}

int run_log(const JournalArgs& a) {
  auto j = open_for(a);
  if (!j) return journal_error(j.error().message);
  auto list = (*j)->recent(a.limit);
  if (!list) return journal_error(list.error().message);
  json all = json::array();
  for (const auto& r : *list) {
    if (a.json) {
      all.push_back(record_json(r, false));
      continue;
    }
    std::string effect;
    const std::string state = state_of(r, effect);
    std::printf("%s  %s  %-22s %-9s %s %s at %s\n", r.submission.id.c_str(),
                iso_time(r.entries.empty() ? 0 : r.entries.front().at_unix_ms).c_str(),
                wire::printable(state, 64).c_str(), effect.c_str(), r.submission.oid.substr(0, 12).c_str(),
                refs_label(r.submission).c_str(), wire::printable(r.submission.remote, 300).c_str());
  }
  if (a.json) std::printf("%s\n", dump(all).c_str());
  return kExitOk;
}

int run_show(const JournalArgs& a) {
  auto j = open_for(a);
  if (!j) return journal_error(j.error().message);
  auto r = (*j)->find(*a.id);
  if (!r) return journal_error(r.error().message);
  if (!*r) return journal_error("no delivery " + *a.id + " in the journal");
  if (a.json) {
    std::printf("%s\n", dump(record_json(**r, true)).c_str());
    return kExitOk;
  }
  const auto& s = (*r)->submission;
  std::printf("delivery %s (attempt %d): %s to %s at %s\n", s.id.c_str(), s.attempt, s.oid.c_str(),
              refs_label(s).c_str(), wire::printable(s.remote, 300).c_str());
  if (s.updates.size() > 1) {
    for (const RefUpdate& u : s.updates) {
      std::printf("  update %s to %s (%s)\n", wire::printable(u.ref, 200).c_str(), u.oid.c_str(),
                  std::string(update_mode_word(u.update)).c_str());
    }
  }
  for (const auto& e : (*r)->entries) {
    std::printf("  %s  #%d %-16s %s\n", iso_time(e.at_unix_ms).c_str(), e.attempt, journal::step_name(e.step),
                shown_detail(e.detail).c_str());
  }
  if (auto done = (*r)->last(journal::Step::finished)) {
    if (auto o = journal::outcome_from_detail(done->detail)) print_ref_lines(*o);
  }
  std::printf("the same id again: %s\n", wire::printable(same_id_now(**r).second, 2000).c_str());
  return kExitOk;
}

int run_recover(const JournalArgs& a) {
  auto path = a.state ? Result<std::string>(std::string()) : journal_path(a.journal);
  if (!path) return journal_error(path.error().message);
  ExecutorOptions eo;
  eo.journal = *path;
  if (a.state) eo.state = *a.state;
  if (a.lane_dir) eo.lane_dir = *a.lane_dir;
  if (a.host_id) eo.host_id = *a.host_id;
  eo.workers = 1;
  eo.read_back = make_read_back(a.auth, a.ca_file, a.allow_http_loopback);
  eo.on_log = [](std::string_view line) {
    std::fprintf(stderr, "git-courier: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  // The executor recovers once, when it opens the journal: that pass is
  // the command's.
  Executor executor(eo);
  const auto& recovered = executor.recovered_at_start();
  if (!recovered) return journal_error(recovered.error().message);
  const std::vector<Outcome>& done = *recovered;
  json all = json::array();
  for (const auto& o : done) {
    if (a.json) {
      all.push_back(detail_json(journal::outcome_detail(o)));
    } else {
      std::printf("recovered %s: %s, remote_effect %s: %s\n", o.delivery_id.c_str(), outcome_name(o.kind),
                  remote_effect_name(o.remote_effect), wire::printable(o.reason, 2000).c_str());
      if (o.observed_after && o.refs.size() < 2) std::printf("  %s\n", observed_line(*o.observed_after).c_str());
      print_ref_lines(o);
    }
  }
  if (a.json) std::printf("%s\n", dump(all).c_str());
  if (!a.json && done.empty()) std::printf("nothing to recover\n");
  return kExitOk;
}

}  // namespace courier::cli
