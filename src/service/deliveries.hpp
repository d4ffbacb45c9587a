// deliveries.hpp — the service's registry of deliveries over one
// courier::Executor: each delivery's event log (fed by DeliveryRequest::
// on_event, numbered from the journal: event_numbering.hpp), its state
// (`stopping` once revoked while live) and outcome; idempotent submission
// (the same id while in flight is the existing delivery, never a second
// submit; a journalled id follows the executor's J4 rules; another body
// under a known id is refused before anything is journalled); the queue
// limit; revocation; and the drain.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "auth/auth_setup.hpp"
#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "service/event_numbering.hpp"
#include "service/metrics.hpp"

namespace courier::service {

// A stream of NDJSON lines that a connection reads without holding a
// thread: next() gives what is there; wait() parks the reader until more
// may be there.
class EventStream {
 public:
  virtual ~EventStream() = default;
  struct Chunk {
    std::string text;  // whole lines (may be empty)
    bool end = false;  // nothing more will ever come
  };
  virtual Chunk next() = 0;
  // When nothing is there yet: runs `park` and keeps `wake` to be called
  // once when more is there, both under the stream's lock, and returns true;
  // when something is there already, runs neither and returns false.
  virtual bool wait(const std::function<void()>& park, std::function<void()> wake) = 0;
};

// One delivery as the service knows it.
class Delivery {
 public:
  std::string id;
  std::string repo;
  std::string remote;  // canonical
  std::string ref;
  std::string oid;
  std::string credential;  // the credential's name ("": none)
  std::int64_t submitted_unix_ms = 0;

  // "queued", "pending", "running", "stopping" (a revocation was asked
  // while it ran, its stop not yet confirmed) or "finished".
  std::string state() const;
  int attempt() const;
  std::optional<Outcome> outcome() const;
  bool same_body(const std::string& repo_, const std::string& remote_, const std::string& ref_,
                 const std::string& oid_) const;

  struct Impl;
  std::shared_ptr<Impl> impl;
};

// A validated submission (the API checked every field).
struct SubmitInput {
  std::string id;  // empty: a new id is made
  // The delivery (repo, remote, ref, oid, update, expect_old) as
  // validate() accepted it: its remote read once (H2), never again.
  CheckedRequest checked;
  std::chrono::milliseconds deadline{150'000};
  // Instead of `deadline`: the absolute instant (wall clock, ms since the
  // epoch), for a delivery resumed after a crash, which keeps its first
  // deadline (D1: never extended).
  std::optional<std::int64_t> deadline_unix_ms;
  std::string credential;       // a name among the service's credentials ("": none)
  std::string credential_spec;  // what that name stands for (key:FILE, ...)
  bool remote_progress = false;
};

struct SubmitResult {
  enum class Kind { accepted, existing, replayed, conflict, queue_full, draining, refused };
  Kind kind = Kind::refused;
  std::shared_ptr<Delivery> delivery;  // accepted, existing
  Outcome outcome;                     // replayed
  std::string message;                 // conflict, refused
  int retry_after_s = 1;               // queue_full
};

struct RevokeResult {
  enum class Kind { not_found, cancelled_no_dispatch, stopping, already_finished };
  Kind kind = Kind::not_found;
  std::shared_ptr<Delivery> delivery;
  std::optional<Outcome> outcome;
};

struct RegistryOptions {
  std::size_t max_queued = 256;
  std::size_t workers = 4;
  // How the executor's request is completed (ca_file, allow_http_loopback).
  std::optional<std::string> ca_file;
  std::string known_hosts;  // ssh remotes: --known-hosts, absolute ("" the default)
  bool allow_http_loopback = false;
  // Finished deliveries kept in memory (older ones are read from the journal).
  std::size_t keep_finished = 4096;
  // The generation that numbers event lines (event_numbering.hpp); empty:
  // this boot's (boot_generation()).
  std::string gen;
};

class Deliveries {
 public:
  // `journal` (may be null: no journal) is the service's own connection,
  // for the id checks and the transitions; `metrics` outlives this.
  Deliveries(RegistryOptions options, std::unique_ptr<journal::Journal> journal, Metrics& metrics);
  ~Deliveries();
  Deliveries(const Deliveries&) = delete;
  Deliveries& operator=(const Deliveries&) = delete;

  // The executor deliveries run in; set once before any submit, and it
  // must be destroyed before this registry.
  void attach(Executor* executor);

  SubmitResult submit(const SubmitInput& in);
  std::shared_ptr<Delivery> find(const std::string& id) const;
  // The journal's record of an id this registry does not hold.
  std::optional<journal::Record> journalled(const std::string& id) const;
  std::vector<std::shared_ptr<Delivery>> list(const std::string& state, const std::string& remote_canonical,
                                              std::size_t limit) const;
  RevokeResult revoke(const std::string& id, const std::string& cause);
  std::unique_ptr<EventStream> events(const std::shared_ptr<Delivery>& d, std::uint64_t after) const;
  // The generation every event line of this registry carries.
  const std::string& gen() const { return gen_; }

  Gauges gauges() const;
  std::size_t live() const;

  // The drain: refuse new submissions (draining); wait until no delivery
  // is live or the instant passes (true: none live); revoke every live one.
  void stop_accepting();
  bool draining() const;
  bool wait_idle(std::chrono::steady_clock::time_point until) const;
  void revoke_all(const std::string& cause);
  // The drain's first step: every delivery not yet dispatched (queued,
  // pending on its lane, waiting for a lease) ends cancelled_no_dispatch
  // with cause shutdown; live ones go on.
  void withdraw_queued(const std::string& cause);

 private:
  void on_event(const std::weak_ptr<Delivery::Impl>& w, const DeliveryEvent& e);
  void finished(Delivery::Impl& d);
  void revoke_line(Delivery::Impl& d);
  std::optional<std::uint64_t> ordinal(const std::string& id, journal::Step step) const;
  std::optional<std::string> conflict(const SubmitInput& in, const std::shared_ptr<Delivery>& known) const;
  CheckedRequest request_for(const SubmitInput& in, const std::shared_ptr<Delivery>& d);
  SubmitResult run(const SubmitInput& in, std::shared_ptr<Delivery> d);
  void forget_old_locked();

  RegistryOptions opt_;
  std::unique_ptr<journal::Journal> journal_;
  Metrics& metrics_;
  Executor* executor_ = nullptr;
  mutable std::mutex mu_;
  mutable std::condition_variable idle_cv_;
  std::map<std::string, std::shared_ptr<Delivery>> by_id_;
  std::vector<std::string> order_;  // ids, oldest first
  // Every delivery not yet finished, owned here whatever the index holds, so
  // that each one's end is counted and the drain can revoke it.
  std::map<const Delivery::Impl*, std::shared_ptr<Delivery::Impl>> live_set_;
  std::size_t live_ = 0;
  std::size_t queued_ = 0;
  std::uint64_t unconfirmed_ = 0;
  bool draining_ = false;
  const std::string gen_;
};

}  // namespace courier::service
