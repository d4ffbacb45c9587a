// via_client.cpp — `git-courier push --via SOCKET` (see the header): the
// service's HTTP API over its Unix socket with libcurl, its NDJSON events
// fed to the same ProgressView as a local push, its outcome document
// decoded and told by the same report().
#include "cli/via_client.hpp"

#include <curl/curl.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/forced_update.hpp"
#include "cli/output.hpp"
#include "cli/progress_view.hpp"
#include "cli/push.hpp"
#include "cli/push_request.hpp"
#include "cli/tracking_update.hpp"
#include "cli/via_answer.hpp"
#include "courier/courier.hpp"
#include "courier/host_api.hpp"
#include "report/event_json.hpp"
#include "report/outcome_json.hpp"
#include "sys/clock.hpp"
#include "sys/lazy_library.hpp"
#include "sys/signals.hpp"
#include "transport/http_leg.hpp"
#include "wire/text.hpp"
#include "wire/url.hpp"

namespace courier::cli {

namespace {

using nlohmann::json;

constexpr long kConnectTimeoutMs = 5'000;
// A request's answer (the submission, a revocation): the service answers
// them at once, whatever its queue; waiting is what the events are for.
constexpr long kAnswerTimeoutMs = 30'000;
// A service restarted by its supervisor is listening again within this
// (its start and its recovery's stop confirmations; the read-back is
// counted apart).
constexpr std::int64_t kRestartMarginMs = 10'000;
// How long past the delivery's deadline its events are awaited: the
// child's stop (kReapBound + kEofBound past the deadline), then a crashed
// service's restart and its recovery's read-back of a `possible` outcome
// (kReadBackBudget): 30 s. Past it the service is taken as lost.
constexpr std::int64_t kStreamGraceMs =
    (kReapBound + kEofBound) / sys::kNsPerMs + kReadBackBudget.count() + kRestartMarginMs;
// Between two attempts to follow the events again after the service went
// away (a restart resumes what it had queued).
constexpr auto kReconnectPause = std::chrono::milliseconds(250);
// An answer, or one event line, larger than this is not the service's.
constexpr std::size_t kMaxAnswer = 1 << 20;

// The service's answer to one request.
struct Answer {
  long status = 0;
  std::string body;
  std::optional<long> retry_after;  // Retry-After (seconds), with a 429 or 503
};

// What one exchange hands its body to, piece by piece; false stops it.
using Sink = std::function<bool(std::string_view)>;

struct Exchange {
  const Sink* sink = nullptr;
  std::optional<long> retry_after;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  return (*x->sink)(std::string_view(data, size * n)) ? size * n : 0;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    std::string name(line.substr(0, kName.size()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == kName) {
      try {
        x->retry_after = std::stol(std::string(line.substr(kName.size())));
      } catch (...) {  // not a number of seconds: no advice
      }
    }
  }
  return size * n;
}

// Why libcurl could not reach the service, for people. Errors:
// connect_failed (nothing there, or nothing listening), os_error (this
// user may not reach the socket: a usage matter), leg_timeout.
Error unreachable(const std::string& socket, CURLcode rc, long os_errno) {
  if (rc == CURLE_COULDNT_CONNECT && os_errno == EACCES) {
    return Error{Errc::os_error, "this user may not reach the service's socket " + socket +
                                     " (permission denied: its directory admits the service's user and group only)"};
  }
  if (rc == CURLE_COULDNT_CONNECT) {
    const char* why = os_errno == ENOENT         ? "no such socket"
                      : os_errno == ECONNREFUSED ? "nothing listens on it"
                                                 : curl_easy_strerror(rc);
    return Error{Errc::connect_failed,
                 "no service answers at " + socket + " (" + why + "): is `git-courier serve` running there?"};
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return Error{Errc::leg_timeout, "the service at " + socket + " did not answer in time"};
  }
  return Error{Errc::leg_aborted, "the exchange with the service at " + socket + " broke: " + curl_easy_strerror(rc)};
}

// The service's socket: one HTTP/1.1 exchange per call, a new connection
// each (the socket is local: a connection costs microseconds).
class ServiceSocket {
 public:
  explicit ServiceSocket(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // One request and its whole answer. Errors: as unreachable(), and
  // body_too_large.
  Result<Answer> call(const char* method, const std::string& target, const std::string& body) const {
    Answer answer;
    const Sink sink = [&answer](std::string_view piece) {
      answer.body.append(piece);
      return answer.body.size() <= kMaxAnswer;
    };
    auto status = perform(method, target, body, kAnswerTimeoutMs, sink, answer.retry_after);
    if (!status) return tl::unexpected(status.error());
    answer.status = *status;
    return answer;
  }

  // GET of a stream: its body to `sink` as it arrives, until the service
  // ends it, `sink` returns false, or timeout_ms. Returns the status.
  // Errors: as call().
  Result<long> stream(const std::string& target, const Sink& sink, long timeout_ms) const {
    std::optional<long> retry_after;
    return perform("GET", target, "", timeout_ms, sink, retry_after);
  }

 private:
  Result<long> perform(const char* method, const std::string& target, const std::string& body, long timeout_ms,
                       const Sink& sink, std::optional<long>& retry_after) const {
    CURL* h = curl_easy_init();
    if (!h) return fail(Errc::curl_refused, "libcurl could not make a handle");
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    Exchange x{&sink, std::nullopt};
    const std::string url = "http://localhost" + target;
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, path_.c_str());
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    if (std::string_view(method) == "POST") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (std::string_view(method) != "GET") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    const CURLcode rc = curl_easy_perform(h);
    long status = 0;
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    retry_after = x.retry_after;
    if (rc == CURLE_WRITE_ERROR) return fail(Errc::body_too_large, "the service's answer is larger than 1 MiB");
    if (rc != CURLE_OK) return tl::unexpected(unreachable(path_, rc, os_errno));
    return status;
  }

  std::string path_;
};

// The delivery as the service is asked for it.
struct Target {
  PushRequest request;    // judged here as far as it can be without the service
  std::string canonical;  // the remote as an outcome names it
};

// --repo, --remote and --force-with-lease as a local push reads them (an
// absolute path; a configured remote's URL; the lease's id), and every
// field the service would refuse whatever its configuration, judged here
// by the same validate(): the URL is taken apart here too, so that a
// password in it never leaves this process (H2). Errors: every refused field.
tl::expected<Target, FieldErrors> resolve_target(const PushArgs& a) {
  auto request = read_push_request(a, PushSide::via);
  if (!request) return tl::unexpected(std::move(request.error()));
  Target t;
  t.canonical = request->checked.remote();
  t.request = std::move(*request);
  return t;
}

// An update rule as the body spells it; null: fast_forward (the default).
json update_rule(UpdateMode mode, const std::optional<std::string>& expect_old) {
  if (mode == UpdateMode::force) return "force";
  if (mode == UpdateMode::expect_old && expect_old) return {{"expect_old", *expect_old}};
  return nullptr;
}

// "updates": each ref as the command line settled it, its object by the
// revision (the service looks it up) or the zero id for a deletion.
json updates_body(const PushArgs& a, const CheckedRequest& checked) {
  json out = json::array();
  const auto& updates = checked.updates();
  for (std::size_t i = 0; i < a.refs.size() && i < updates.size(); ++i) {
    json u = {{"ref", updates[i].ref}};
    if (a.refs[i].rev) {
      u["rev"] = *a.refs[i].rev;
    } else {
      u["oid"] = std::string(40, '0');
    }
    if (auto rule = update_rule(updates[i].update, updates[i].expect_old); !rule.is_null()) u["update"] = rule;
    out.push_back(std::move(u));
  }
  return out;
}

// POST /v1/deliveries's body (docs/service.md).
std::string submission(const PushArgs& a, const Target& t, std::int64_t left_ms) {
  const DeliveryRequest& req = t.request.checked.request();
  json b = {{"repo", req.repo},
            {"remote", t.request.resolved.url},
            {"deadline", std::to_string(std::max<std::int64_t>(left_ms, 1)) + "ms"},
            {"remote_progress", show_meters(a)}};
  if (a.refs.empty()) {
    b["ref"] = a.ref;
    if (a.oid) b["oid"] = *a.oid;
    if (a.rev) b["rev"] = *a.rev;
    if (auto rule = update_rule(req.update, req.expect_old); !rule.is_null()) b["update"] = rule;
  } else {
    b["updates"] = updates_body(a, t.request.checked);
  }
  if (req.atomic != Atomicity::automatic) b["atomic"] = std::string(enum_word(req.atomic));
  if (!req.push_options.empty()) b["push_options"] = req.push_options;
  if (a.credential) b["credential"] = *a.credential;
  if (a.delivery_id) b["id"] = *a.delivery_id;
  return b.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Why the command ends without an outcome, and its exit code.
struct Stop {
  int code = kExitFailed;
  std::string message;
  std::optional<long> retry_after;
};

Stop stop_for(const Error& e) {
  return Stop{e.code == Errc::os_error || e.code == Errc::invalid_argument ? kExitUsage : kExitFailed, e.message};
}

// A refusal the service answered: its error object, told with its status.
// 429 (full), 503 (draining) and 5xx are the service's state: exit 3, try
// again; any other status is about the request: exit 2, as a usage error.
Stop refusal(const Answer& answer) {
  std::string message = refusal_message(answer.status, answer.body);
  const bool busy = answer.status == 429 || answer.status >= 500;
  if (answer.retry_after) message += "; try again in " + std::to_string(*answer.retry_after) + " s";
  return Stop{busy ? kExitFailed : kExitUsage, "the service refused the delivery: " + message, answer.retry_after};
}

// What the submission gave: the delivery's id, or, when the journal already
// finished that id, its outcome (nothing is sent again).
tl::expected<SubmitAnswer, Stop> submit(const ServiceSocket& socket, const std::string& body) {
  auto answer = socket.call("POST", "/v1/deliveries", body);
  if (!answer) return tl::unexpected(stop_for(answer.error()));
  if (answer->status != 200 && answer->status != 202) return tl::unexpected(refusal(*answer));
  auto s = read_submit_answer(answer->status, answer->body);
  if (!s) return tl::unexpected(Stop{kExitFailed, s.error().message});
  return std::move(*s);
}

// Ctrl-C (and SIGTERM, SIGHUP) as a local push takes them: a revocation,
// here through the service (DELETE), then the outcome is still awaited.
class Revoker {
 public:
  Revoker(const PushArgs& a, const ServiceSocket& socket, ProgressView& view) : a_(a), socket_(socket), view_(view) {}

  // From the signal watcher's thread.
  void on_signal(int signo) {
    std::lock_guard<std::mutex> lock(mu_);
    say_signalled(signo, ++signals_, view_);
    if (signals_ == 1 && !id_.empty()) revoke_locked();
  }

  // The delivery's id, once the service gave it: a signal that came before
  // is acted on now.
  void set_id(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    id_ = id;
    if (signals_ > 0) revoke_locked();
  }

 private:
  // DELETE /v1/deliveries/ID: the service journals the revocation, then
  // kills and confirms (or cancels before dispatch); the events end with
  // the outcome either way.
  void revoke_locked() {
    if (sent_) return;
    sent_ = true;
    auto answer = socket_.call("DELETE", "/v1/deliveries/" + id_, "");
    if (!answer || answer->status != 200) {
      const std::string why = answer ? "it answered " + std::to_string(answer->status) : answer.error().message;
      std::fprintf(stderr, "git-courier: the revocation did not reach the service (%s)\n", why.c_str());
      return;
    }
    if (a_.verbose && !a_.quiet) {
      std::fprintf(stderr, "git-courier: the service: %s\n",
                   wire::terminal_safe(read_revoke_answer(answer->body)).c_str());
    }
  }

  const PushArgs& a_;
  const ServiceSocket& socket_;
  ProgressView& view_;
  std::mutex mu_;
  std::string id_;
  int signals_ = 0;
  bool sent_ = false;
};

// The events of one delivery, line by line, into the ProgressView (and
// with -v, what the service did, as the supervisor's log lines are shown
// locally); the finished event's outcome kept.
class EventFollower {
 public:
  EventFollower(const PushArgs& a, ProgressView& view) : a_(a), view_(view) {}

  // A piece of the stream. False: a line over the cap (the stream is not
  // the service's).
  bool feed(std::string_view piece) {
    buffer_.append(piece);
    for (std::size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
      on_line(std::string_view(buffer_).substr(0, nl));
      buffer_.erase(0, nl + 1);
    }
    return buffer_.size() <= kMaxAnswer;
  }
  void restart() { buffer_.clear(); }
  // Where to follow again: `GEN:SEQ` once a line said its generation.
  std::string cursor() const { return gen_.empty() ? std::to_string(seq_) : gen_ + ":" + std::to_string(seq_); }
  const std::optional<report::DecodedOutcome>& outcome() const { return outcome_; }
  const std::string& error() const { return error_; }

 private:
  void on_line(std::string_view line) {
    auto e = read_event_line(line);
    if (!e) return;
    // Another generation numbered this line: the service restarted after a
    // boot, which may have lost numbers it gave; it starts again from the
    // delivery's first event, and so does this count.
    if (!e->gen.empty() && e->gen != gen_) {
      if (!gen_.empty()) seq_ = 0;
      gen_ = e->gen;
    }
    if (e->seq <= seq_) return;  // already seen before a reconnection
    seq_ = e->seq;
    on_event(*e);
  }

  void on_event(const ServiceEvent& e) {
    if (e.outcome) {
      if (*e.outcome) outcome_ = **e.outcome;
      if (!*e.outcome) error_ = e.outcome->error().message;
      return;
    }
    if (e.kind == DeliveryEvent::Kind::pending || e.kind == DeliveryEvent::Kind::progress) {
      view_.on(e.event);
      return;
    }
    if (e.kind == DeliveryEvent::Kind::seat_granted) {  // a lane wait's end
      DeliveryEvent granted = e.event;
      granted.kind = DeliveryEvent::Kind::seat_granted;
      view_.on(granted);
    }
    log(e);
  }

  void log(const ServiceEvent& e) {
    if (!a_.verbose || a_.quiet) return;
    if (!e.kind && e.name == report::kQueuedEvent) view_.log("queued in the service");
    if (!e.kind && e.name == report::kRevokeRequestedEvent) view_.log("revocation requested; stopping");
    if (e.kind == DeliveryEvent::Kind::seat_granted) view_.log("the lane's seat is granted");
    if (e.kind == DeliveryEvent::Kind::dispatched) {
      view_.log("dispatched: child pid " + std::to_string(e.event.child_pid));
    }
  }

  const PushArgs& a_;
  ProgressView& view_;
  std::string buffer_;
  std::uint64_t seq_ = 0;
  std::string gen_;
  std::optional<report::DecodedOutcome> outcome_;
  std::string error_;
};

// Follows the delivery's events to its outcome. A stream that ends before
// it (the service restarted, or was stopped and started) is followed again
// from the last event seen, until stream_deadline. Errors: the service was
// lost, or answered with something else than the events.
tl::expected<report::DecodedOutcome, Stop> follow(const PushArgs& a, const ServiceSocket& socket, const std::string& id,
                                                  ProgressView& view, sys::MonoNs stream_deadline) {
  EventFollower events(a, view);
  const Sink sink = [&events](std::string_view piece) { return events.feed(piece); };
  std::string lost;
  bool told = false;
  while (true) {
    const sys::MonoNs now = sys::mono_now_ns();
    if (now >= stream_deadline) break;
    events.restart();
    const long left_ms = static_cast<long>((stream_deadline - now) / sys::kNsPerMs) + 1;
    auto status = socket.stream("/v1/deliveries/" + id + "/events?after=" + events.cursor(), sink, left_ms);
    if (events.outcome()) return *events.outcome();
    if (!events.error().empty()) return tl::unexpected(Stop{kExitFailed, events.error()});
    if (status && *status != 200) {
      return tl::unexpected(
          Stop{kExitFailed, "the service answered " + std::to_string(*status) + " for the events of delivery " + id});
    }
    lost = status ? "the events ended before the outcome" : status.error().message;
    if (!told && !a.quiet) {
      std::fprintf(stderr, "git-courier: lost the service (%s); following delivery %s again\n",
                   wire::terminal_safe(lost).c_str(), wire::terminal_safe(id).c_str());
      told = true;
    }
    std::this_thread::sleep_for(kReconnectPause);
  }
  return tl::unexpected(Stop{kExitFailed, "lost the service before the outcome of delivery " + id + " (" + lost +
                                              "); it may still run: curl --unix-socket " + socket.path() +
                                              " http://localhost/v1/deliveries/" + id});
}

// The command ends without an outcome: the message (and with --json, one
// object on stdout).
int stopped(const PushArgs& a, const Stop& s) {
  if (s.code == kExitUsage) return push_usage(a, s.message);
  std::fprintf(stderr, "git-courier: push: %s\n", wire::terminal_safe(s.message).c_str());
  if (a.json) {
    std::printf("%s\n", s.code == kExitMismatch
                            ? json_service_mismatch("push: " + s.message).c_str()
                            : json_service_unavailable("push: " + s.message, s.retry_after).c_str());
  }
  std::fflush(stdout);
  return s.code;
}

// The service's outcome must be the one for what was asked: this delivery
// id, ref, remote and (with --oid) object. Anything else (a confused or
// hostile service, another delivery's events) is refused, never told as
// this push's outcome. With --rev the service resolves the object; its
// reading cannot be checked here. Errors: the mismatch, exit kExitMismatch.
tl::expected<void, Stop> check_matches(const PushArgs& a, const Target& t, const std::string& id,
                                       const report::DecodedOutcome& d) {
  std::string wrong;
  const auto differ = [&](const char* what, const std::string& asked, const std::string& got) {
    if (asked == got) return;
    wrong += std::string(wrong.empty() ? "" : "; ") + what + " " + wire::printable(got, 120) + ", not " +
             wire::printable(asked, 120);
  };
  differ("delivery", id, d.outcome.delivery_id);
  differ("ref", a.refs.empty() ? a.ref : t.request.checked.updates().front().ref, d.facts.ref);
  differ("remote", t.canonical, d.facts.remote);
  if (a.oid) differ("object", wire::ascii_lower(*a.oid), wire::ascii_lower(d.facts.oid));
  if (wrong.empty()) return {};
  return tl::unexpected(Stop{kExitMismatch, "the service answered with an outcome for another delivery (" + wrong +
                                                "); it is not this push's: check the service and "
                                                "`git-courier show` for delivery " +
                                                wire::printable(id, 120)});
}

int tell(const PushArgs& a, const Target& t, const report::DecodedOutcome& d) {
  DeliveryFacts facts{d.facts.remote, d.facts.ref, d.facts.oid, "", d.facts.hint.value_or("")};
  facts.asked = push_facts(a, t.request.checked).asked;
  const DeliveryRequest& req = t.request.checked.request();
  facts.forced = forced_update(req.repo, req.update, d.facts.ref, d.facts.oid, d.outcome);
  return report(a, d.outcome, facts);
}

}  // namespace

int run_push_via(const PushArgs& a) {
  // The command's deadline counts from here, as a local push's does.
  const sys::MonoNs started = sys::mono_now_ns();
  auto target = resolve_target(a);
  if (!target) return push_refused(a, target.error());
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::curl); !lib) {
    return stopped(a, Stop{kExitFailed, lib.error().message});
  }
  transport::init_transport();
  const ServiceSocket socket(*a.via);
  ProgressView view(progress_options(a));
  view.set_lane(target->request.checked.lane());
  Revoker revoker(a, socket, view);
  auto watcher = sys::SignalWatcher::start([&revoker](int signo) { revoker.on_signal(signo); });
  if (!watcher) return push_usage(a, "cannot watch signals: " + watcher.error().message);

  const std::int64_t left_ms = a.deadline.count() - (sys::mono_now_ns() - started) / sys::kNsPerMs;
  auto submitted = submit(socket, submission(a, *target, left_ms));
  if (!submitted) return stopped(a, submitted.error());
  if (a.delivery_id && submitted->id != *a.delivery_id) {
    return stopped(a, Stop{kExitMismatch, "the service took the delivery as " + wire::printable(submitted->id, 120) +
                                              ", not as the --delivery-id " + *a.delivery_id + " asked for"});
  }
  if (submitted->replayed) {
    if (auto ok = check_matches(a, *target, submitted->id, *submitted->replayed); !ok) return stopped(a, ok.error());
    return tell(a, *target, *submitted->replayed);
  }
  if (a.verbose && !a.quiet) view.log("submitted to " + socket.path() + " as delivery " + submitted->id);
  revoker.set_id(submitted->id);
  const sys::MonoNs stream_deadline = sys::mono_after_ms(started, a.deadline.count() + kStreamGraceMs);
  auto outcome = follow(a, socket, submitted->id, view, stream_deadline);
  watcher->reset();
  view.finish();
  if (!outcome) return stopped(a, outcome.error());
  if (auto ok = check_matches(a, *target, submitted->id, *outcome); !ok) return stopped(a, ok.error());
  const int code = tell(a, *target, *outcome);
  // The service pushed; the user's repository is this side's to keep.
  const DeliveryRequest& req = target->request.checked.request();
  track(a, push_facts(a, target->request.checked),
        PushedRef{req.repo, target->request.resolved.name, outcome->facts.ref, outcome->facts.oid}, outcome->outcome);
  return code;
}

}  // namespace courier::cli
