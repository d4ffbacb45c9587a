// custody.cpp — rules A1–A3 at the pipe: what crosses it, and what a
// minter or an authority that misbehaves can and cannot do to a delivery.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "auth/ed25519_minter.hpp"
#include "auth/minter.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_custody {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

SupervisorOptions standin(const std::string& scenario, std::int64_t budget_ms) {
  SupervisorOptions o;
  o.child_program = COURIER_STANDIN;
  o.job.repo = scenario;
  o.job.remote = "https://127.0.0.1:9/r.git";
  o.job.updates = {RefUpdate{"refs/heads/main", std::string(40, 'a')}};
  o.job.authenticated = true;
  o.deadline = mono_now_ns() + budget_ms * kNsPerMs;
  o.on_stderr = [](std::string_view) {};
  return o;
}

}  // namespace

TEST_SUITE("supervisor") {
  TEST_CASE(
      "A3: authority revoked while the minter is parked: the token never crosses the pipe; revoked, well before the "
      "deadline") {
    auto opt = standin("mint-then-report", 30'000);
    const auto deadline = opt.deadline;
    test::Latch parked, release;
    std::atomic<bool> holds{true};
    opt.mint = [parked, release](const MintRequest&) {
      parked.open();
      release.wait(60'000);  // inside "signing"
      return MintAnswer{std::string("Authorization: Bearer SENTINEL-TOKEN"), ""};
    };
    opt.authority = [&holds](const std::string&) {
      return holds.load() ? AuthorityAnswer{true, ""} : AuthorityAnswer{false, "the turn was taken away"};
    };
    std::string err;
    opt.on_stderr = [&err](std::string_view s) { err.append(s); };
    std::vector<std::string> to_child;
    opt.on_frame = [&to_child](bool out, std::string_view body) {
      if (out) to_child.emplace_back(body);
    };
    Supervisor sup(opt);
    Outcome o;
    std::thread t([&] { o = sup.run(); });
    REQUIRE(parked.wait(10'000));
    holds = false;   // authority ends while the minter is inside its call
    release.open();  // the minter returns a token
    t.join();
    CHECK_MESSAGE(o.kind == OutcomeKind::revoked, outcome_name(o.kind), ": ", o.reason);
    CHECK(o.child.reaped);
    for (const auto& f : to_child) {
      CHECK_MESSAGE(f.find("SENTINEL-TOKEN") == std::string::npos,
                    "a token minted for a revoked delivery crossed the pipe: ", f);
    }
    CHECK(err.find("SENTINEL-TOKEN") == std::string::npos);
    CHECK(o.timings.confirmed < deadline - 20'000 * kNsPerMs);
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("A2: a minter that never returns cannot hold the delivery past its deadline; the stop is confirmed") {
    auto opt = standin("mint-then-wedge", 600);
    test::Latch parked, release;
    opt.mint = [parked, release](const MintRequest&) {
      parked.open();
      release.wait(60'000);
      return MintAnswer{std::nullopt, "too late"};
    };
    Supervisor sup(opt);
    Outcome o = sup.run();
    CHECK(parked.is_open());
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    CHECK(o.child.reaped);
    CHECK(o.child.stdout_eof);
    REQUIRE(o.deadline_overrun().has_value());
    CHECK(*o.deadline_overrun() < 100 * kNsPerMs);
    release.open();
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE(
      "A1: a real key:FILE push: the child's argv and environment hold nothing key-shaped, no frame to it holds the "
      "key, every leg its own token") {
    test::TempDir dir;
    const std::string key_file = dir.path() + "/node.pem";
    auto kg = auth::keygen(key_file);
    REQUIRE(kg);
    const std::string pem = test::read_file(key_file);
    auto key = auth::Ed25519Key::load(key_file);
    REQUIRE(key);
    test::FixtureOptions fo;
    fo.verify_key = key_file;
    fo.replay_dir = dir.path() + "/replay";
    test::FixtureServer server(fo);
    server.create_bare_repo("r");
    const std::string tip = test::make_source_repo(dir.path() + "/src", 2);
    SupervisorOptions opt;
    opt.child_program = COURIER_BINARY;
    opt.job.repo = dir.path() + "/src";
    opt.job.remote = server.url("r");
    opt.job.updates = {RefUpdate{"refs/heads/main", tip}};
    opt.job.authenticated = true;
    opt.job.ca_file = server.ca_file();
    opt.deadline = mono_now_ns() + 30'000 * kNsPerMs;
    opt.on_stderr = [](std::string_view) {};
    auth::MintContext ctx;
    ctx.remote = opt.job.remote;
    ctx.ref = opt.job.updates.front().ref;
    ctx.oid = tip;
    ctx.deadline = opt.deadline;
    opt.mint = auth::make_mint_callback(
        std::make_shared<auth::Ed25519Minter>(std::make_shared<const auth::Ed25519Key>(std::move(*key))), ctx, nullptr);
    std::vector<std::string> wire;
    opt.on_frame = [&wire](bool out, std::string_view body) {
      if (out) wire.emplace_back(body);
    };
    ::setenv("COURIER_TEST_KEY_PATH", key_file.c_str(), 1);
    Supervisor sup(opt);
    Outcome o = sup.run();
    ::unsetenv("COURIER_TEST_KEY_PATH");
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    // argv and environment as the child received them.
    for (const auto& a : o.child_argv) CHECK(a.find("pem") == std::string::npos);
    for (const auto& k : o.child_env_keys) {
      CHECK_MESSAGE(k.find("KEY") == std::string::npos, k);
      CHECK_MESSAGE(k.find("TOKEN") == std::string::npos, k);
      CHECK_MESSAGE(k.rfind("GIT_", 0) != 0, k);
    }
    // Every frame the parent wrote: no PEM text, no line of the PEM body.
    std::vector<std::string> pem_lines;
    for (std::size_t pos = 0; pos < pem.size();) {
      auto nl = pem.find('\n', pos);
      std::string line = pem.substr(pos, nl - pos);
      if (!line.empty() && line.find("-----") == std::string::npos) pem_lines.push_back(line);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    REQUIRE_FALSE(pem_lines.empty());
    std::size_t minted = 0;
    for (const auto& f : wire) {
      CHECK(f.find("PRIVATE KEY") == std::string::npos);
      for (const auto& l : pem_lines)
        CHECK_MESSAGE(f.find(l) == std::string::npos, "key material in a frame to the child");
      if (f.find("\"minted\"") != std::string::npos) ++minted;
    }
    CHECK(minted == 2);
    std::set<std::string> tokens;
    for (const auto& e : server.journal()) tokens.insert(e.header("Authorization").value_or(""));
    CHECK(tokens.size() == 2);
    CHECK(tokens.count("") == 0);
  }
}

}  // namespace integration_custody
