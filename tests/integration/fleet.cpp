// fleet.cpp — two `git-courier serve` processes ("hosts": each its own
// host id, lane directory, socket and database role) sharing one real
// PostgreSQL 15 (a throwaway cluster, tests/support/pg_support.hpp) and the TLS
// fixture server (git http-backend): many deliveries from both (S1 and J4
// across hosts), a host cut off from the database while its push is held
// at the POST (L1, L3), a frozen host whose child kills itself at its lease
// bound (L2), and a database restart in the middle of a run (nothing lost).
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "pg_support.hpp"
#include "service_support.hpp"
#include "state/state_url.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_fleet {

using namespace courier;
using nlohmann::json;
using test::wait_for_fact;

namespace {

// The leases of the partition, frozen-host and restart tests: short, so a
// test waits seconds, with the stop bound shortened to fit the margin
// (the margin must cover two stop bounds: ExecutorOptions::lease_margin).
constexpr long kTtlMs = 4'000;
constexpr long kMarginMs = 1'200;
constexpr long kStopBoundMs = 500;

std::vector<std::string> lease_flags() {
  return {"--lease-ttl",  std::to_string(kTtlMs) + "ms",      "--lease-margin", std::to_string(kMarginMs) + "ms",
          "--stop-bound", std::to_string(kStopBoundMs) + "ms"};
}

// One line-delimited event stream read until an event of `kind` (or the
// end, or timeout_ms): that event, or null.
json first_event(const std::string& socket, const std::string& id, const std::string& kind, long timeout_ms) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::copy(socket.begin(), socket.end(), a.sun_path);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const std::string req = "GET /v1/deliveries/" + id + "/events HTTP/1.1\r\nHost: courier\r\nConnection: close\r\n\r\n";
  REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
  const auto until = sys::mono_now_ns() + timeout_ms * sys::kNsPerMs;
  std::string in;
  json found;
  while (found.is_null() && sys::mono_now_ns() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
    std::size_t at = 0;
    while ((at = in.find("\"event\":\"" + kind + "\"", at)) != std::string::npos) {
      const auto open = in.rfind('{', at);
      const auto close = in.find('}', at);
      if (open == std::string::npos || close == std::string::npos) break;
      found = json::parse(in.substr(open, close - open + 1), nullptr, false);
      break;
    }
  }
  ::close(fd);
  return found.is_discarded() ? json() : found;
}

// A delivery's document from one service, or null when it has none.
json delivery_doc(const test::ServeProcess& svc, const std::string& id) {
  const auto r = svc.get("/v1/deliveries/" + id);
  if (r.status != 200 || !r.body.is_object()) return json();
  return r.body;
}

json outcome_of(const test::ServeProcess& svc, const std::string& id) {
  const json d = delivery_doc(svc, id);
  if (!d.is_object() || !d.contains("outcome") || !d["outcome"].is_object()) return json();
  return d["outcome"];
}

std::int64_t fence_of(const journal::Record& r) {
  auto e = r.last(journal::Step::claimed);
  if (!e) return 0;
  const json j = json::parse(e->detail, nullptr, false);
  if (!j.is_object() || !j.contains("fence")) return 0;
  return j["fence"].is_number() ? j["fence"].get<std::int64_t>() : std::atoll(j["fence"].get<std::string>().c_str());
}

struct Fleet {
  test::TempDir dir;
  test::FixtureServer fx;
  test::PgCluster pg = test::PgCluster::start();
  std::string root;
  std::string source;
  std::string tip;

  Fleet() {
    root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    source = root + "/source";
    tip = test::make_source_repo(source, 3);
    // One role per host, so that one host can be cut off from the database
    // (NOLOGIN, then its backends ended) while the other goes on.
    pg.sql("CREATE ROLE host_a LOGIN SUPERUSER");
    pg.sql("CREATE ROLE host_b LOGIN SUPERUSER");
  }
  std::string url_as(const std::string& role) const {
    std::string u = pg.url();
    const auto at = u.find("postgres@");
    REQUIRE(at != std::string::npos);
    return u.replace(at, 8, role);
  }
  // A host: its own state directory (socket, lanes), host id and role.
  std::unique_ptr<test::ServeProcess> host(const std::string& name, std::vector<std::string> extra = {}) {
    const std::string state = dir.path() + "/" + name;
    std::filesystem::create_directories(state + "/lanes");
    std::vector<std::string> args = {"--state",    url_as(name == "a" ? "host_a" : "host_b"),
                                     "--host-id",  "host-" + name,
                                     "--lane-dir", state + "/lanes",
                                     "--ca-file",  fx.ca_file()};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<test::ServeProcess>(state, root, args);
  }
  std::unique_ptr<journal::Journal> journal() const {
    auto url = state::parse_state_url(pg.url());
    REQUIRE(url.has_value());
    auto j = journal::open_state(*url, "git-courier/test");
    REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
    return std::move(*j);
  }
  json body(const std::string& id, const std::string& repo, const std::string& ref,
            const std::string& deadline = "120s") const {
    return {{"id", id}, {"repo", source}, {"remote", fx.url(repo)}, {"ref", ref}, {"oid", tip}, {"deadline", deadline}};
  }
  // Milliseconds since the epoch of the lane's lease expiry, by the database.
  std::int64_t lease_expiry_ms(const std::string& repo) const {
    const std::string v =
        pg.sql("SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM courier_lease WHERE lane LIKE " +
               test::sql_literal("%/" + repo));
    return std::atoll(v.c_str());
  }
};

std::vector<std::string> remotes_named(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("r" + std::to_string(i));
  return out;
}

bool all_idle(const std::vector<test::ServeProcess*>& hosts) {
  for (auto* h : hosts) {
    const json j = h->get("/healthz").body;
    if (!j.is_object() || j["live"] != 0 || j["queued"] != 0) return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("fleet") {
  TEST_CASE(
      "L3 S1 J4 Q1: two services sharing one database deliver 400 deliveries to 8 remotes, each id submitted to both: "
      "every one runs once, one live POST per remote at the server, fences grow per lane") {
    constexpr int kRemotes = 8;
    constexpr int kDeliveries = 400;
    constexpr int kClients = 4;
    Fleet f;
    for (int i = 0; i < kRemotes; ++i) f.fx.create_bare_repo("r" + std::to_string(i));
    const std::vector<std::string> common = {"--workers", "4", "--warm", "2", "--max-queued", "1000"};
    auto a = f.host("a", common);
    auto b = f.host("b", common);
    REQUIRE_MESSAGE(a->up(), a->log());
    REQUIRE_MESSAGE(b->up(), b->log());
    std::mutex mu;
    std::map<int, int> first_codes, second_codes;
    const auto t0 = sys::mono_now_ns();
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        for (int k = c; k < kDeliveries; k += kClients) {
          const json body = f.body("fleet-" + std::to_string(k), "r" + std::to_string(k % kRemotes),
                                   "refs/heads/d-" + std::to_string(k), "300s");
          // Each id to both hosts, in turn first: J4 across hosts.
          test::ServeProcess* first = k % 2 ? a.get() : b.get();
          test::ServeProcess* second = k % 2 ? b.get() : a.get();
          const int c1 = first->post(body).status;
          const int c2 = second->post(body).status;
          std::lock_guard<std::mutex> lock(mu);
          ++first_codes[c1];
          ++second_codes[c2];
        }
      });
    }
    for (auto& t : clients) t.join();
    REQUIRE_MESSAGE(wait_for_fact(
                        [&] {
                          return all_idle({a.get(), b.get()});
                        },
                        400'000, 200'000),
                    "the deliveries did not all finish");
    const double secs = sys::ns_to_ms(sys::mono_now_ns() - t0) / 1000.0;
    test::report("fleet", "deliveries (two hosts, one database)", kDeliveries, "");
    test::report("fleet", "first submit to all finished", secs * 1000.0, "ms");
    test::report("fleet", "deliveries per second", kDeliveries / secs, "/s");
    CHECK(first_codes[202] == kDeliveries);
    std::string codes;
    for (const auto& [code, n] : second_codes) codes += std::to_string(code) + "x" + std::to_string(n) + " ";
    MESSAGE("the second submission of each id got: " << codes);
    // The journal: every id once, delivered, on its first attempt, by one host.
    auto j = f.journal();
    auto all = j->recent(10 * kDeliveries);
    REQUIRE(all.has_value());
    std::map<std::string, std::string> kinds;
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> fences;  // lane -> (claimed at, fence)
    std::set<std::string> hosts;
    for (const auto& r : *all) {
      auto fin = r.last(journal::Step::finished);
      kinds[r.submission.id] = fin ? journal::detail_text(fin->detail, "kind") : "unfinished";
      CHECK(r.submission.attempt == 1);
      hosts.insert(r.submission.host);
      if (auto c = r.last(journal::Step::claimed)) fences[r.submission.lane].emplace_back(c->at_unix_ms, fence_of(r));
    }
    CHECK(kinds.size() == static_cast<std::size_t>(kDeliveries));
    long delivered = 0;
    for (const auto& [id, kind] : kinds) delivered += kind == "delivered";
    CHECK_MESSAGE(delivered == kDeliveries, "delivered: " << delivered << " of " << kDeliveries);
    CHECK(hosts == std::set<std::string>{"host-a", "host-b"});
    // L3: on each lane, a later claim has a higher fence.
    long out_of_order = 0;
    for (auto& [lane, v] : fences) {
      std::sort(v.begin(), v.end());
      for (std::size_t i = 1; i < v.size(); ++i)
        out_of_order += v[i].first > v[i - 1].first && v[i].second <= v[i - 1].second;
      CHECK(v.front().second > 0);
    }
    CHECK_MESSAGE(out_of_order == 0, out_of_order << " claims had a fence not above the earlier claim's on their lane");
    // The server: one POST per delivery, never two at once on one remote.
    const auto log = f.fx.journal();
    long posts = 0;
    for (const auto& e : log) posts += e.method == "POST";
    CHECK(posts == kDeliveries);
    long worst = 0;
    for (const auto& [path, peak] : test::peak_in_flight(log, "POST")) worst = std::max(worst, peak);
    test::report("fleet", "peak live POSTs on one remote (two hosts)", static_cast<double>(worst), "");
    CHECK_MESSAGE(worst == 1, "S1 across hosts: " << worst << " POSTs were live at once on one remote");
    CHECK(test::refs_on(f.fx, remotes_named(kRemotes)) == kDeliveries);
    CHECK(f.pg.sql("SELECT count(*) FROM courier_lease WHERE NOT released") == "0");
    CHECK(a->stop() == 0);
    CHECK(b->stop() == 0);
  }

  TEST_CASE(
      "L1 L3: a host cut off from the database while its push is held at the POST kills and confirms its child "
      "before the lease expires; the other host takes the lane only after the expiry plus the margin; the journal "
      "has both fences in order") {
    Fleet f;
    f.fx.create_bare_repo("r");
    auto a = f.host("a", lease_flags());
    auto b = f.host("b", lease_flags());
    REQUIRE_MESSAGE(a->up(), a->log());
    REQUIRE_MESSAGE(b->up(), b->log());
    f.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    REQUIRE(a->post(f.body("cut-a", "r", "refs/heads/a")).status == 202);
    REQUIRE_MESSAGE(f.fx.wait_for_held(30'000).has_value(), first_event(a->socket(), "cut-a", "pending", 1'000).dump()
                                                                << "\n"
                                                                << a->log());
    REQUIRE(b->post(f.body("cut-b", "r", "refs/heads/b")).status == 202);
    const json pending = first_event(b->socket(), "cut-b", "pending", 20'000);
    REQUIRE(pending.is_object());
    CHECK_MESSAGE(pending["holder"].get<std::string>().find("held by host host-a, delivery cut-a") != std::string::npos,
                  pending.dump());
    // The cut: host a may not log in again, and its sessions are ended.
    f.pg.sql("ALTER ROLE host_a NOLOGIN");
    const auto cut_at = sys::mono_now_ns();
    const std::int64_t cut_wall = journal::wall_now_ms();
    CHECK(f.pg.terminate("git-courier/host-a/") >= 1);
    const std::int64_t expiry_ms = f.lease_expiry_ms("r");
    REQUIRE(expiry_ms > cut_wall - kTtlMs);
    // Host a learns it at its next renewal (within ttl/3) and stops its child.
    json out;
    REQUIRE(wait_for_fact([&] { return (out = outcome_of(*a, "cut-a")).is_object(); }, kTtlMs + 5'000));
    const std::int64_t stopped_wall = journal::wall_now_ms();
    test::report("fleet partition", "cut to the held push's confirmed stop", sys::ns_to_ms(sys::mono_now_ns() - cut_at),
                 "ms");
    test::report("fleet partition", "confirmed stop before the lease's expiry",
                 static_cast<double>(expiry_ms - stopped_wall), "ms");
    CHECK(out["outcome"] == "revoked");
    CHECK_MESSAGE(out["reason"].get<std::string>().find("lease") != std::string::npos, out.dump());
    CHECK(out["remote_effect"] == "possible");
    // What an operator's alert reads (docs/operations.md, "Alerts"): the
    // lease loss is counted on the host that lost it.
    const std::string metrics_a = a->get("/metrics").raw;
    CHECK_MESSAGE(metrics_a.find("\ngit_courier_lease_losses_total 1\n") != std::string::npos,
                  "host a's lease loss was not counted:\n"
                      << metrics_a);
    CHECK_MESSAGE(stopped_wall < expiry_ms,
                  "L1: the stop was confirmed " << stopped_wall - expiry_ms << " ms after the lease expired");
    // Host b: seat only after the expiry plus the margin, by the database's clock.
    json got_b;
    REQUIRE(wait_for_fact([&] { return (got_b = outcome_of(*b, "cut-b")).is_object(); }, kTtlMs + kMarginMs + 20'000));
    CHECK(got_b["outcome"] == "delivered");
    // The cut heals: host a's journal entries that waited are written.
    f.pg.sql("ALTER ROLE host_a LOGIN");
    auto j = f.journal();
    std::optional<journal::Record> ra;
    REQUIRE_MESSAGE(wait_for_fact(
                        [&] {
                          auto r = j->find("cut-a");
                          if (r && *r && (*r)->finished) ra = **r;
                          return ra.has_value();
                        },
                        20'000, 100'000),
                    "host a's outcome never reached the journal");
    auto rb = j->find("cut-b");
    REQUIRE((rb && *rb));
    const auto fin_a = ra->last(journal::Step::finished);
    CHECK(journal::detail_text(fin_a->detail, "kind") == "revoked");
    const auto claimed_b = (*rb)->last(journal::Step::claimed);
    REQUIRE(claimed_b.has_value());
    test::report("fleet partition", "lane taken after the lease's expiry",
                 static_cast<double>(claimed_b->at_unix_ms - expiry_ms), "ms");
    CHECK_MESSAGE(claimed_b->at_unix_ms >= expiry_ms + kMarginMs,
                  "L3: host b claimed " << claimed_b->at_unix_ms - expiry_ms << " ms after the expiry (margin "
                                        << kMarginMs << " ms)");
    const std::int64_t fa = fence_of(*ra), fb = fence_of(**rb);
    test::report("fleet partition", "fence of host a", static_cast<double>(fa), "");
    test::report("fleet partition", "fence of host b", static_cast<double>(fb), "");
    CHECK(fa > 0);
    CHECK_MESSAGE(fb > fa, "L3: fences " << fa << " then " << fb);
    // Host a's POST stays held at the server (released, the server would
    // run it: what a fence is for, tests/integration/fence.cpp).
    CHECK(a->stop() == 0);
    CHECK(b->stop() == 0);
  }

  TEST_CASE(
      "L2: a frozen host's child kills itself at its lease bound; the other host proceeds after the expiry plus the "
      "margin; resumed, the frozen host does not push and records its delivery as revoked by lease loss") {
    Fleet f;
    f.fx.create_bare_repo("r");
    auto a = f.host("a", lease_flags());
    auto b = f.host("b", lease_flags());
    REQUIRE_MESSAGE(a->up(), a->log());
    REQUIRE_MESSAGE(b->up(), b->log());
    f.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    REQUIRE(a->post(f.body("frozen-a", "r", "refs/heads/a")).status == 202);
    const json dispatched = first_event(a->socket(), "frozen-a", "dispatched", 30'000);
    REQUIRE(dispatched.is_object());
    const int child = dispatched["child_pid"].get<int>();
    REQUIRE(f.fx.wait_for_held(30'000).has_value());
    REQUIRE(b->post(f.body("frozen-b", "r", "refs/heads/b")).status == 202);
    REQUIRE(first_event(b->socket(), "frozen-b", "pending", 20'000).is_object());
    REQUIRE(::kill(a->pid(), SIGSTOP) == 0);
    const auto frozen_at = sys::mono_now_ns();
    // Its child, unsupervised now, is gone (a zombie its frozen parent cannot
    // reap) by its lease bound: the last renewal's send (before the freeze)
    // + ttl − margin.
    const bool died = wait_for_fact(
        [&] {
          const char st = sys::proc_state(child);
          return st == 0 || st == 'Z';
        },
        kTtlMs + 2'000, 2'000);
    const double after_ms = sys::ns_to_ms(sys::mono_now_ns() - frozen_at);
    test::report("fleet frozen host", "freeze to the child's own kill", after_ms, "ms");
    CHECK_MESSAGE(died, "L2: the child of the frozen host was still running " << after_ms << " ms after the freeze");
    CHECK_MESSAGE(after_ms <= static_cast<double>(kTtlMs - kMarginMs + 50),
                  "L2: the child died " << after_ms << " ms after the freeze; its bound was at most "
                                        << kTtlMs - kMarginMs << " ms away");
    json got_b;
    REQUIRE(
        wait_for_fact([&] { return (got_b = outcome_of(*b, "frozen-b")).is_object(); }, kTtlMs + kMarginMs + 20'000));
    CHECK(got_b["outcome"] == "delivered");
    REQUIRE(::kill(a->pid(), SIGCONT) == 0);
    json out;
    REQUIRE(wait_for_fact([&] { return (out = outcome_of(*a, "frozen-a")).is_object(); }, 20'000));
    CHECK(out["outcome"] == "revoked");
    CHECK_MESSAGE(out["revoke_cause"].dump().find("lease") != std::string::npos, out.dump());
    // It did not push: the remote has b's ref and not a's.
    auto refs = test::git({"--git-dir", f.fx.repo_path("r"), "for-each-ref", "--format=%(refname)"});
    REQUIRE(refs.ok());
    CHECK(refs.out.find("refs/heads/b") != std::string::npos);
    CHECK(refs.out.find("refs/heads/a") == std::string::npos);
    auto j = f.journal();
    std::optional<journal::Record> ra;
    REQUIRE(wait_for_fact(
        [&] {
          auto r = j->find("frozen-a");
          if (r && *r && (*r)->finished) ra = **r;
          return ra.has_value();
        },
        20'000, 100'000));
    CHECK(journal::detail_text(ra->last(journal::Step::finished)->detail, "kind") == "revoked");
    CHECK(a->stop() == 0);
    CHECK(b->stop() == 0);
  }

  TEST_CASE(
      "J1 L1: a database restart in the middle of a run loses nothing: every delivery ends in the journal, the ones "
      "cut short are delivered when submitted again, and no lease is left held") {
    constexpr int kRemotes = 4;
    constexpr int kDeliveries = 40;
    Fleet f;
    for (int i = 0; i < kRemotes; ++i) f.fx.create_bare_repo("r" + std::to_string(i));
    auto a = f.host("a", lease_flags());
    auto b = f.host("b", lease_flags());
    REQUIRE_MESSAGE(a->up(), a->log());
    REQUIRE_MESSAGE(b->up(), b->log());
    auto body_of = [&](int k) {
      return f.body("restart-" + std::to_string(k), "r" + std::to_string(k % kRemotes),
                    "refs/heads/d-" + std::to_string(k));
    };
    for (int k = 0; k < kDeliveries; ++k) REQUIRE((k % 2 ? a : b)->post(body_of(k)).status == 202);
    // Some have finished (a fact at the server) when the database stops.
    auto posts_done = [&] {
      long n = 0;
      for (const auto& e : f.fx.journal()) n += e.method == "POST" && e.end_ns.has_value();
      return n;
    };
    REQUIRE(wait_for_fact([&] { return posts_done() >= kDeliveries / 4; }, 60'000, 20'000));
    f.pg.stop();
    const auto stopped_at = sys::mono_now_ns();
    // Down for one renewal period at least: every held lease misses one.
    wait_for_fact([&] { return sys::mono_now_ns() - stopped_at >= kTtlMs / 3 * sys::kNsPerMs; }, kTtlMs, 50'000);
    f.pg.restart();
    REQUIRE(wait_for_fact([&] { return all_idle({a.get(), b.get()}); }, 120'000, 100'000));
    // Every delivery's outcome reaches the journal (written again once the
    // database was back), and nothing is left unfinished.
    auto j = f.journal();
    REQUIRE_MESSAGE(wait_for_fact(
                        [&] {
                          auto w = j->open_work();
                          return w && w->empty();
                        },
                        30'000, 100'000),
                    "deliveries were left unfinished in the journal");
    // The ones cut short, by how they ended: a stop by a lost lease or
    // after `possible` runs again under its id (J4: as new, or as a
    // compare-and-swap); any other end (a POST refused because its
    // post_started could not be journalled: J1) replays, so a new id
    // delivers it.
    std::map<int, std::string> again;  // k -> the id delivered in the end
    std::map<std::string, int> kinds;
    for (int k = 0; k < kDeliveries; ++k) {
      const std::string id = "restart-" + std::to_string(k);
      auto r = j->find(id);
      REQUIRE((r && *r));
      const std::string kind = journal::detail_text((*r)->last(journal::Step::finished)->detail, "kind");
      ++kinds[kind];
      if (kind == "delivered") continue;
      again[k] = kind == "revoked" || kind == "interrupted" ? id : id + "-again";
    }
    for (const auto& [kind, n] : kinds) test::report("fleet restart", "ended " + kind, n, "");
    for (const auto& [k, id] : again) {
      json body = body_of(k);
      body["id"] = id;
      CHECK((k % 2 ? a : b)->post(body).status / 100 == 2);
    }
    REQUIRE(wait_for_fact([&] { return all_idle({a.get(), b.get()}); }, 120'000, 100'000));
    for (const auto& [k, id] : again) {
      const json o = outcome_of(k % 2 ? *a : *b, id);
      CHECK_MESSAGE((o["outcome"] == "delivered" || o["outcome"] == "up_to_date"), o.dump());
    }
    CHECK(test::refs_on(f.fx, remotes_named(kRemotes)) == kDeliveries);
    CHECK(f.pg.sql("SELECT count(*) FROM courier_lease WHERE NOT released AND expires_at > now()") == "0");
    CHECK(a->stop() == 0);
    CHECK(b->stop() == 0);
  }

  TEST_CASE(
      "J3 L3 Q2: recovery on another host finishes a crashed host's delivery only once that host shows no life and "
      "its lease has expired plus the margin, never while the lease lives") {
    Fleet f;
    f.fx.create_bare_repo("r");
    auto a = f.host("a", lease_flags());
    REQUIRE_MESSAGE(a->up(), a->log());
    f.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    REQUIRE(a->post(f.body("crash-a", "r", "refs/heads/a")).status == 202);
    REQUIRE(f.fx.wait_for_held(30'000).has_value());
    a->crash();
    const std::int64_t expiry_ms = f.lease_expiry_ms("r");
    auto recover = [&] {
      std::vector<std::string> argv = {COURIER_BINARY, "recover", "--state",    f.url_as("host_b"),
                                       "--host-id",    "host-b",  "--lane-dir", f.dir.path() + "/b-lanes"};
      std::filesystem::create_directories(f.dir.path() + "/b-lanes");
      return test::run(argv, {}, test::Stdin::bytes, test::cli_env());
    };
    // At once: the lease lives (and host a's heartbeat too): left alone.
    const auto early = recover();
    const std::int64_t early_at = journal::wall_now_ms();
    INFO(early.out << early.err);
    REQUIRE(early_at < expiry_ms + kMarginMs);
    CHECK(early.exit_code == 0);
    CHECK_MESSAGE(early.out.find("crash-a") == std::string::npos, "J3: a delivery with a live lease was recovered");
    auto j = f.journal();
    auto r = j->find("crash-a");
    REQUIRE((r && *r));
    CHECK_FALSE((*r)->finished);
    // Past the expiry plus the margin by the database's clock (a fact read
    // from the database), recovery on host b finishes it.
    REQUIRE(wait_for_fact(
        [&] {
          return f.pg.sql("SELECT count(*) FROM courier_lease WHERE expires_at + interval '" +
                          std::to_string(kMarginMs) + " milliseconds' <= now()") == "1";
        },
        kTtlMs + kMarginMs + 5'000, 50'000));
    REQUIRE(wait_for_fact(
        [&] {
          return f.pg.sql("SELECT count(*) FROM courier_instance WHERE host = 'host-a' AND alive_until > now()") == "0";
        },
        kTtlMs + 5'000, 50'000));
    const auto late = recover();
    INFO(late.out << late.err);
    CHECK(late.exit_code == 0);
    CHECK(late.out.find("recovered crash-a: interrupted, remote_effect possible") != std::string::npos);
    r = j->find("crash-a");
    REQUIRE((r && *r));
    CHECK((*r)->finished);
    CHECK(journal::detail_text((*r)->last(journal::Step::finished)->detail, "reason").find("host host-a") !=
          std::string::npos);
  }

  TEST_CASE(
      "S5 service: DELETE on a delivery seated and waiting for the lease another host holds answers "
      "cancelled_no_dispatch, the outcome it then ends with") {
    Fleet f;
    f.fx.create_bare_repo("r");
    auto a = f.host("a");
    auto b = f.host("b");
    REQUIRE_MESSAGE(a->up(), a->log());
    REQUIRE_MESSAGE(b->up(), b->log());
    f.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    REQUIRE(b->post(f.body("held-b", "r", "refs/heads/b")).status == 202);
    REQUIRE(f.fx.wait_for_held(30'000).has_value());
    // Host a seats its delivery on its own lane lock, then waits for b's
    // lease: the revocation lands after the seat, before the dispatch claim,
    // and the seat's worker writes the outcome later.
    REQUIRE(a->post(f.body("waits-a", "r", "refs/heads/a")).status == 202);
    REQUIRE(first_event(a->socket(), "waits-a", "pending", 20'000).is_object());
    const test::Http d = test::curl(a->socket(), "DELETE", "/v1/deliveries/waits-a");
    CHECK(d.status == 200);
    json out;
    REQUIRE(wait_for_fact([&] { return (out = outcome_of(*a, "waits-a")).is_object(); }, 20'000));
    CHECK(out["outcome"] == "cancelled_no_dispatch");
    CHECK_MESSAGE(d.body["result"] == out["outcome"],
                  "DELETE answered " << d.body["result"] << ", the delivery ended " << out["outcome"]);
    f.fx.release();
    json got_b;
    REQUIRE(wait_for_fact([&] { return (got_b = outcome_of(*b, "held-b")).is_object(); }, 20'000));
    CHECK(got_b["outcome"] == "delivered");
  }
}

}  // namespace integration_fleet
