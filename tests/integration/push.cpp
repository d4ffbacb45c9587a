// push.cpp — rules C2, C3, T1–T4 end to end: the shipped git-courier
// binary as the child, real pipes, verified TLS, a real `git http-backend`
// behind the fixture server, and the remote read back with git afterwards.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "sys/clock.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "push_setup.hpp"
#include "support.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_push {

using namespace courier;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

using Setup = test::PushSetup;

std::string source_state(const std::string& repo) {
  // Everything under .git that a push could change: refs, config, objects.
  return test::git_ok({"for-each-ref", "--format=%(refname) %(objectname)"}, repo) + "\n" +
         test::git_ok({"count-objects", "-v"}, repo) + "\n" + test::git_ok({"config", "--list", "--local"}, repo);
}

// The stop after a kill: confirmed, and the child (whose pid the dispatch
// event named) is gone and was reaped.
void check_stop(const Outcome& o, std::int64_t child) {
  CHECK(o.child.reaped);
  CHECK(o.child.stdout_eof);
  CHECK(o.child.stderr_eof);
  CHECK(o.timings.confirmed != 0);
  CHECK(o.seat() == SeatDisposition::release);
  CHECK(child == o.child.pid);
  CHECK_MESSAGE(!sys::pid_exists(static_cast<pid_t>(o.child.pid)), "the child outlived its confirmed stop");
}

}  // namespace

TEST_SUITE("push") {
  TEST_CASE("T4: a new ref is delivered into an empty bare repository, read back and fsck-clean") {
    Setup s(3);
    s.server.create_bare_repo("r");
    const std::string before = source_state(s.source);
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.child.reaped);
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
    CHECK(o.objects == 9u);  // 3 commits, each with its tree and blob
    CHECK(o.old_oid == std::string(40, '0'));
    CHECK(s.posts("r") == 1);
    CHECK_MESSAGE(source_state(s.source) == before, "C3: the source repository changed");
  }

  TEST_CASE("T4: an update sends only the objects the remote lacks") {
    Setup s(5);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    const std::string older = s.rev("HEAD~2");
    REQUIRE(ex.submit(s.request("r", older)).wait().kind == OutcomeKind::delivered);
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.old_oid == older);
    CHECK(o.objects == 6u);  // two new commits, their trees and blobs
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE("the remote's own words (a hook's output on side-band 2) reach the host as progress text") {
    Setup s(2);
    s.server.create_bare_repo("r");
    const std::string hook = s.server.repo_path("r") + "/hooks/post-receive";
    test::write_file(hook, "#!/bin/sh\necho 'hello from the hook'\n");
    ::chmod(hook.c_str(), 0755);
    auto texts = std::make_shared<std::vector<std::string>>();
    auto mu = std::make_shared<std::mutex>();
    Executor ex(s.executor_options());
    auto req = s.request("r", s.tip);
    req.on_event = [texts, mu](const DeliveryEvent& e) {
      if (e.kind != DeliveryEvent::Kind::progress || e.phase != "remote") return;
      std::lock_guard<std::mutex> lock(*mu);
      texts->push_back(e.text);
    };
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    std::lock_guard<std::mutex> lock(*mu);
    bool seen = false;
    for (const auto& t : *texts) seen = seen || t.find("hello from the hook") != std::string::npos;
    CHECK_MESSAGE(seen, "remote lines seen: ", texts->size());
  }

  TEST_CASE("T2: a ref already at the gated id is up_to_date and no POST is sent") {
    Setup s(2);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    REQUIRE(ex.submit(s.request("r", s.tip)).wait().kind == OutcomeKind::delivered);
    const long posts_before = s.posts("r");
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::up_to_date, o.reason);
    CHECK(s.posts("r") == posts_before);
  }

  TEST_CASE("T4: a non-fast-forward refused by the remote is rejected with its reason") {
    Setup s(3);
    s.server.create_bare_repo("r");
    test::git_ok({"--git-dir", s.server.repo_path("r"), "config", "receive.denyNonFastForwards", "true"});
    Executor ex(s.executor_options());
    REQUIRE(ex.submit(s.request("r", s.tip)).wait().kind == OutcomeKind::delivered);
    // Forced, so that the remote's policy (not the fast-forward rule the
    // child applies by default) is what refuses it.
    DeliveryRequest rewind = s.request("r", s.rev("HEAD~1"));
    rewind.update = UpdateMode::force;
    Outcome o = ex.submit(rewind).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::rejected, o.reason);
    CHECK(o.reason.find("non-fast-forward") != std::string::npos);
    CHECK(o.remote_effect == RemoteEffect::refused);
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE("T4: a stale expect_old is refused before any POST") {
    Setup s(3);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    REQUIRE(ex.submit(s.request("r", s.rev("HEAD~1"))).wait().kind == OutcomeKind::delivered);
    auto req = s.request("r", s.tip);
    req.expect_old = s.rev("HEAD~2");
    const long posts_before = s.posts("r");
    Outcome o = ex.submit(req).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::rejected, o.reason);
    CHECK(o.reason.find("expect_old") != std::string::npos);
    CHECK(s.posts("r") == posts_before);
    CHECK(s.remote_ref("r") == s.rev("HEAD~1"));
  }

  TEST_CASE("T2: a redirect answer ends the leg; no second request is made") {
    Setup s(2);
    s.server.create_bare_repo("r");
    s.server.respond(test::RequestMatch::next("GET", "info/refs"), 302, s.server.url("elsewhere") + "/info/refs");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
    CHECK(o.reason.find("302") != std::string::npos);
    CHECK(s.server.count().total == 1);
  }

  TEST_CASE("T1: without a trust anchor TLS fails and no request reaches the handler") {
    Setup s(2);
    s.server.create_bare_repo("r");
    const char* saved = std::getenv("SSL_CERT_FILE");
    ::setenv("SSL_CERT_FILE", "/nonexistent/ca.pem", 1);
    Executor ex(s.executor_options());
    auto req = s.request("r", s.tip);
    req.ca_file.reset();
    Outcome o = ex.submit(req).wait();
    if (saved)
      ::setenv("SSL_CERT_FILE", saved, 1);
    else
      ::unsetenv("SSL_CERT_FILE");
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
    CHECK_MESSAGE(s.server.count().total == 0, "a request reached the handler over an unverified TLS connection");
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE("T1: --ca-file pins trust: a server signed by a CA that only SSL_CERT_DIR trusts is refused") {
    Setup s(2);
    s.server.create_bare_repo("r");
    // Another CA, which did not sign the server: the pinned anchor.
    test::FixtureServer other;
    // A certificate directory (OpenSSL's hashed layout) holding the server's CA.
    test::TempDir certs;
    const auto hash = test::run({"/usr/bin/openssl", "x509", "-hash", "-noout", "-in", s.server.ca_file()});
    REQUIRE(hash.exit_code == 0);
    test::write_file(certs.path() + "/" + hash.out.substr(0, hash.out.find('\n')) + ".0",
                     test::read_file(s.server.ca_file()));
    const char* saved_dir = std::getenv("SSL_CERT_DIR");
    const std::string saved_dir_value = saved_dir ? saved_dir : "";
    const char* saved_file = std::getenv("SSL_CERT_FILE");
    const std::string saved_file_value = saved_file ? saved_file : "";
    ::setenv("SSL_CERT_DIR", certs.path().c_str(), 1);
    ::unsetenv("SSL_CERT_FILE");
    Outcome pinned;
    Outcome unpinned;
    {
      Executor ex(s.executor_options());
      auto req = s.request("r", s.tip);
      req.ca_file = other.ca_file();
      pinned = ex.submit(req).wait();
      // The directory itself works: without a CA file it is what trusts the server.
      req.ca_file.reset();
      unpinned = ex.submit(req).wait();
    }
    if (saved_dir)
      ::setenv("SSL_CERT_DIR", saved_dir_value.c_str(), 1);
    else
      ::unsetenv("SSL_CERT_DIR");
    if (saved_file) ::setenv("SSL_CERT_FILE", saved_file_value.c_str(), 1);
    CHECK_MESSAGE(pinned.kind == OutcomeKind::transport_failed,
                  "with --ca-file another CA (from SSL_CERT_DIR) was trusted too: " << pinned.reason);
    CHECK_MESSAGE(unpinned.kind == OutcomeKind::delivered, unpinned.reason);
    CHECK(s.posts("r") == 1);
  }

  TEST_CASE("T1: plain http to a non-loopback host is refused before any connection") {
    Setup s(2);
    Executor ex(s.executor_options());
    auto req = s.request("r", s.tip);
    req.remote = "http://192.0.2.1/r.git";
    req.allow_http_loopback = true;
    Outcome o = ex.submit(req).wait();
    // Refused by validate() at submit: before any child, too.
    CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
    CHECK(o.reason.find("only https") != std::string::npos);
    CHECK(ex.spawned() == 0);
  }

  TEST_CASE("T2: a POST whose connection closes after the headers fails, and is sent exactly once") {
    Setup s(2);
    s.server.create_bare_repo("r");
    s.server.close_after_headers(test::RequestMatch::next("POST", "git-receive-pack"));
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
    CHECK(s.posts("r") == 1);
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE("T2: the POST of a pack over 1 MiB goes on a connection of its own, once, without Expect: 100-continue") {
    // libcurl asks for 100-continue by itself above 1 MiB of body; that
    // round trip is one more thing a server or a middlebox could answer or
    // replay, so the design refuses it. The blob is noise: it does not shrink.
    Setup s(1);
    s.server.create_bare_repo("r");
    {
      std::mt19937_64 noise(12);
      std::string blob(2 * 1024 * 1024, '\0');
      for (auto& c : blob) c = static_cast<char>(noise() & 0xff);
      std::ofstream(s.source + "/noise.bin", std::ios::binary) << blob;
    }
    test::git_ok({"add", "noise.bin"}, s.source);
    test::git_ok({"commit", "-q", "-m", "noise"}, s.source);
    const std::string tip = s.rev("HEAD");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.bytes_sent.value_or(0) > 2 * 1024 * 1024);
    const auto journal = s.server.journal();
    REQUIRE(journal.size() == 2);
    const auto& get = journal[0];
    const auto& post = journal[1];
    CHECK(get.method == "GET");
    REQUIRE(post.method == "POST");
    CHECK(post.body_bytes == static_cast<long long>(o.bytes_sent.value_or(0)));
    CHECK_MESSAGE(post.connection != get.connection, "the POST reused the advertisement's connection");
    CHECK_MESSAGE(!post.header("Expect").has_value(),
                  "the POST asked for 100-continue: ", post.header("Expect").value_or(""));
    CHECK(s.remote_ref("r") == tip);
  }

  TEST_CASE("T4: a POST that fails after its whole body left (a 500, a report cut short) still reports bytes_sent") {
    for (const char* fault : {"500", "close_after_headers"}) {
      CAPTURE(fault);
      Setup s(2);
      s.server.create_bare_repo("r");
      const auto post = test::RequestMatch::next("POST", "git-receive-pack");
      if (std::string(fault) == "500")
        s.server.respond(post, 500);
      else
        s.server.close_after_headers(post);
      Outcome o;
      {
        Executor ex(s.executor_options());
        o = ex.submit(s.request("r", s.tip)).wait();
      }
      CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
      long long received = -1;
      for (const auto& e : s.server.journal()) {
        if (e.method == "POST") received = e.body_bytes;
      }
      REQUIRE(received > 0);
      CHECK_MESSAGE(o.bytes_sent.value_or(0) == static_cast<std::uint64_t>(received),
                    "the server read " << received << " bytes of the POST but the outcome reports "
                                       << o.bytes_sent.value_or(0) << " bytes_sent");
    }
  }

  TEST_CASE("T4: a 200 answer with no report is a failure, never delivered") {
    Setup s(2);
    s.server.create_bare_repo("r");
    s.server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 200, {}, {},
                     {{"Content-Type", "application/x-git-receive-pack-result"}});
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
  }

  TEST_CASE("T4: a remote with another object format is refused before any POST") {
    Setup s(2);
    test::git_ok({"init", "--bare", "-q", "--object-format=sha256", s.server.repo_path("sha")});
    test::git_ok({"--git-dir", s.server.repo_path("sha"), "config", "http.receivepack", "true"});
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("sha", s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
    CHECK(o.reason.find("object format") != std::string::npos);
    CHECK(s.posts("sha") == 0);
  }

  TEST_CASE("C3: an unknown object is refused by the child before any request") {
    Setup s(2);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", std::string(40, 'e'))).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
    CHECK(o.reason.find("not in the repository") != std::string::npos);
    CHECK(s.server.count().total == 0);
  }

  TEST_CASE("D1 A4: a held leg ends at the deadline or on revocation; the stop is confirmed and the ref unchanged") {
    for (const char* leg : {"GET", "POST"}) {
      for (const char* how : {"deadline", "revoke"}) {
        CAPTURE(leg);
        CAPTURE(how);
        Setup s(2);
        s.server.create_bare_repo("r");
        s.server.hold(test::RequestMatch::next(leg, std::string(leg) == "GET" ? "info/refs" : "git-receive-pack"));
        Executor ex(s.executor_options());
        const bool by_deadline = std::string(how) == "deadline";
        auto h = ex.submit(s.request("r", s.tip, by_deadline ? 1'500 : 30'000));
        auto held = s.server.wait_for_held(20'000);
        REQUIRE(held.has_value());
        const auto revoked_at = mono_now_ns();
        if (!by_deadline) h.revoke("test revokes a held " + std::string(leg));
        Outcome o = h.wait();
        CHECK_MESSAGE(o.kind == (by_deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked), o.reason);
        CHECK(o.child.reaped);
        CHECK(o.child.stdout_eof);
        CHECK(o.seat() == SeatDisposition::release);
        if (by_deadline) {
          test::report("held " + std::string(leg), "deadline overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
          CHECK(*o.deadline_overrun() < 100 * kNsPerMs);
        } else {
          test::report("held " + std::string(leg), "revoke to stop confirmed",
                       sys::ns_to_ms(o.timings.confirmed - revoked_at), "ms");
          CHECK(o.timings.confirmed - revoked_at < 1'000 * kNsPerMs);
        }
        CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(o.child.pid)));
        // The POST is held once its whole body was read: the outcome says
        // those bytes left, although the child sent no result.
        if (std::string(leg) == "POST") {
          CHECK_MESSAGE(o.bytes_sent.value_or(0) > 0, "a kill after the POST's body left reports no bytes_sent");
        } else {
          CHECK(o.bytes_sent.value_or(0) == 0);
        }
        s.server.release();
        CHECK(s.remote_ref("r").empty());
      }
    }
  }

  TEST_CASE("S1: a second delivery behind a held POST stays pending until the first is confirmed stopped") {
    Setup s(3);
    s.server.create_bare_repo("r");
    // The first POST is held, and answered 500 once released, so it never
    // lands; the second delivery's advertisement is held too, so the order of
    // what reaches the server is decided by the test, not by a race.
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    s.server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 500);
    Executor ex(s.executor_options());
    auto first = ex.submit(s.request("r", s.rev("HEAD~1"), 2'000));
    auto held_post = s.server.wait_for_held(20'000);
    REQUIRE(held_post.has_value());
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    std::atomic<sys::MonoNs> granted{0};
    auto req2 = s.request("r", s.tip, 30'000);
    req2.on_event = [&](const DeliveryEvent& e) {
      if (e.kind == DeliveryEvent::Kind::seat_granted) granted = mono_now_ns();
    };
    auto second = ex.submit(req2);
    int pending = 0;
    while (!first.wait_for(std::chrono::milliseconds(0))) {
      if (second.state() == DeliveryState::pending) ++pending;
      std::this_thread::yield();
    }
    Outcome o1 = first.wait();
    CHECK(o1.kind == OutcomeKind::deadline_killed);
    CHECK(pending > 0);
    auto held_get = s.server.wait_for_held(20'000);
    REQUIRE(held_get.has_value());
    CHECK(granted.load() >= o1.timings.confirmed);
    s.server.release(held_post->request);
    s.server.release(held_get->request);
    Outcome o2 = second.wait();
    CHECK_MESSAGE(o2.kind == OutcomeKind::delivered, o2.reason);
    test::report("second behind held POST", "pending samples", pending, "samples");
    CHECK(s.server.count().peak_receive_pack == 1);
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE(
      "D1 D2: the real libgit2 delta search of a 20,000-object history is killed at a deadline inside it: "
      "deadline_killed, the child gone, the remote untouched") {
    // libgit2 reports its pack phase in two stages through one callback:
    // while objects are added the total is 0, during the delta search it is
    // the object count, and done == total ends the search. So the last pack
    // progress event the child sent says where it was when it died. The
    // deadline (fixed at submit) must fall inside the delta search on this
    // machine: it starts at a figure that suits a quiet 2-core machine and
    // is moved, within a few attempts, when the kill landed before or after.
    test::TempDir dir;
    auto repo = test::generate_repo(dir.path() + "/big", {"--objects", "21000"});
    REQUIRE(repo.objects >= 20'000);
    test::FixtureServer server;
    ExecutorOptions eo;
    eo.lane_dir = dir.path() + "/lanes";
    eo.child_program = COURIER_BINARY;  // the shipped child, default pack engine (libgit2)
    eo.on_child_stderr = [](std::string_view) {};
    eo.on_log = [](std::string_view) {};
    Executor ex(eo);
    struct Seen {
      std::mutex mu;
      std::vector<DeliveryEvent> progress;
      std::vector<sys::MonoNs> received;  // when each progress event arrived here
      std::int64_t child = 0;
    };
    // Where the delta search falls depends on the machine: the budget starts
    // near it here and moves towards it after each attempt that missed.
    std::int64_t budget_ms = 700;
    bool in_delta = false;
    for (int attempt = 1; attempt <= 8 && !in_delta; ++attempt) {
      const std::string name = "delta" + std::to_string(attempt);
      server.create_bare_repo(name);
      auto seen = std::make_shared<Seen>();
      DeliveryRequest r;
      r.repo = repo.dir;
      r.remote = server.url(name);
      r.ref = "refs/heads/main";
      r.oid = repo.head;
      r.budget = std::chrono::milliseconds(budget_ms);
      r.ca_file = server.ca_file();
      r.pack_engine = PackEngine::libgit2;  // the delta search under test is libgit2's
      r.on_event = [seen](const DeliveryEvent& e) {
        std::lock_guard<std::mutex> lock(seen->mu);
        if (e.kind == DeliveryEvent::Kind::progress) {
          seen->progress.push_back(e);
          seen->received.push_back(mono_now_ns());
        }
        if (e.kind == DeliveryEvent::Kind::dispatched) seen->child = e.child_pid;
      };
      Outcome o = ex.submit(r).wait();
      if (o.kind == OutcomeKind::delivered) {
        // A machine fast enough to finish inside the budget: an attempt
        // outside the delta search, retried with a shorter one.
        MESSAGE("attempt " << attempt << ": delivered within " << budget_ms << " ms");
        budget_ms = budget_ms * 2 / 3;
        continue;
      }
      REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, "attempt ", attempt, " with ", budget_ms,
                      " ms: ", outcome_name(o.kind), ": ", o.reason);
      check_stop(o, seen->child);
      std::lock_guard<std::mutex> lock(seen->mu);
      const DeliveryEvent* last_pack = nullptr;
      sys::MonoNs last_pack_at = 0;
      bool uploading = false;
      for (std::size_t i = 0; i < seen->progress.size(); ++i) {
        const auto& e = seen->progress[i];
        if (e.phase == "enumerate" || e.phase == "compress") {
          last_pack = &e;
          last_pack_at = seen->received[i];
        }
        if (e.phase == "upload") uploading = true;
      }
      const bool adding = last_pack == nullptr || last_pack->total == 0;
      const bool searched = last_pack != nullptr && last_pack->total != 0 && last_pack->done >= last_pack->total;
      in_delta = !adding && !searched && !uploading;
      MESSAGE("attempt " << attempt << ": deadline " << budget_ms << " ms after submit; last pack event "
                         << (last_pack ? std::to_string(last_pack->done) + "/" + std::to_string(last_pack->total)
                                       : std::string("none"))
                         << std::string(uploading ? ", upload begun" : ""));
      // A kill before the upload began leaves nothing at the remote. One that
      // landed in the upload (a faster machine than the budget assumed) is
      // an attempt outside the delta search: its POST may have left and the
      // remote may apply it, so it is retried, not judged here.
      if (!uploading) {
        CHECK_MESSAGE(server.count().count("POST /" + name + ".git/git-receive-pack") == 0, "a POST left the child");
        auto back = test::git({"--git-dir", server.repo_path(name), "rev-parse", "--verify", "-q", "refs/heads/main"});
        CHECK_MESSAGE(!back.ok(), "the remote ref moved: ", back.out);
      }
      if (in_delta) {
        test::report("libgit2 delta kill", "deadline after submit", static_cast<double>(budget_ms), "ms");
        test::report("libgit2 delta kill", "objects searched when killed", static_cast<double>(last_pack->done),
                     "objects");
        test::report("libgit2 delta kill", "objects in the search", static_cast<double>(last_pack->total), "objects");
        test::report("libgit2 delta kill", "last delta-search progress to kill",
                     sys::ns_to_ms(o.timings.kill - last_pack_at), "ms");
        test::report("libgit2 delta kill", "kill overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
        test::report("libgit2 delta kill", "kill to stop confirmed",
                     sys::ns_to_ms(o.timings.confirmed - o.timings.kill), "ms");
      }
      budget_ms = adding ? budget_ms * 3 / 2 : budget_ms * 2 / 3;
    }
    CHECK_MESSAGE(in_delta, "no attempt's deadline fell inside libgit2's delta search");
  }

  TEST_CASE("a generated repository of more than 20,000 objects is delivered end to end through nginx") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir dir;
    auto repo = test::generate_repo(dir.path() + "/big", {"--objects", "21000"});
    REQUIRE(repo.objects >= 20'000);
    nginx.create_bare_repo("big");
    ExecutorOptions eo;
    eo.lane_dir = dir.path() + "/lanes";
    eo.child_program = COURIER_BINARY;
    eo.on_child_stderr = [](std::string_view) {};
    eo.on_log = [](std::string_view) {};
    Executor ex(eo);
    DeliveryRequest r;
    r.repo = repo.dir;
    r.remote = nginx.url("big");
    r.ref = "refs/heads/main";
    r.oid = repo.head;
    r.budget = std::chrono::milliseconds(300'000);
    r.ca_file = nginx.ca_file();
    const auto start = mono_now_ns();
    Outcome o = ex.submit(r).wait();
    const double took = sys::ns_to_ms(mono_now_ns() - start);
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    test::report("large push", "objects", static_cast<double>(o.objects.value_or(0)), "objects");
    test::report("large push", "submit to delivered", took, "ms");
    test::report("large push", "pack", static_cast<double>(o.pack_ms.value_or(0)), "ms");
    test::report("large push", "upload", static_cast<double>(o.upload_ms.value_or(0)), "ms");
    CHECK(o.objects.value_or(0) == static_cast<std::uint64_t>(repo.objects));
    auto back = test::git({"--git-dir", nginx.repo_path("big"), "rev-parse", "refs/heads/main"});
    CHECK(back.out.substr(0, 40) == repo.head);
    CHECK(test::git({"--git-dir", nginx.repo_path("big"), "fsck", "--connectivity-only"}).ok());
  }
}

}  // namespace integration_push
