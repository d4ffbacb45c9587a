// recovery-ssh.cpp — an SSH delivery left behind after post_started is
// recovered as an https one is (interrupted, remote_effect possible, from
// the journal's record of its canonical ssh remote), except that it is not
// read back: recovery does not ask the read-back for an ssh remote and its
// outcome says to check the ref with git ls-remote (A5,
// docs/operations.md "SSH remotes").
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "journal_fixtures.hpp"
#include "seat/recovery.hpp"
#include "support.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_recovery_ssh {

using namespace courier;

namespace {

// The outcome recovery gives a delivery to `remote` whose submitter died
// after post_started, and the remotes the read-back was asked about.
struct Recovered {
  Outcome outcome;
  std::vector<std::string> read_back_asked;
};

Recovered recover_after_post(const std::string& remote) {
  test::TempDir dir;
  auto j = journal::open_sqlite(dir.path() + "/journal.sqlite");
  REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
  journal::Submission s = test::journal_submission("left-1", 1, "");
  auto parsed = wire::parse_remote(remote);
  REQUIRE(parsed.has_value());
  s.remote = parsed->canonical;
  s.lane = parsed->lane;
  REQUIRE((*j)->submit(s, journal::wall_now_ms()).has_value());
  REQUIRE((*j)->append(s.id, test::journal_entry(journal::Step::claimed), true).has_value());
  const std::string sent = R"({"sent":["refs/heads/main"]})";
  REQUIRE((*j)->append(s.id, test::journal_entry(journal::Step::post_started, 1, sent), true).has_value());
  Recovered out;
  seat::RecoveryOptions o;
  o.journal = j->get();
  o.read_back = [&out](const std::string& r, const std::string&) {
    out.read_back_asked.push_back(r);
    return ObservedAfter{std::string(40, '0'), journal::wall_now_ms(), false, ""};
  };
  auto finished = seat::recover(o);
  REQUIRE(finished.has_value());
  REQUIRE(finished->size() == 1);
  out.outcome = finished->front();
  return out;
}

}  // namespace

TEST_SUITE("recovery-ssh") {
  TEST_CASE("A5: an ssh delivery left after post_started is recovered possible, not read back, told to ls-remote") {
    const Recovered ssh = recover_after_post("git@git.example:buyer/shop.git");
    CHECK(ssh.outcome.kind == OutcomeKind::interrupted);
    CHECK(ssh.outcome.remote_effect == RemoteEffect::possible);
    CHECK(ssh.read_back_asked.empty());
    CHECK_FALSE(ssh.outcome.observed_after.has_value());
    CHECK_MESSAGE(ssh.outcome.reason.find("not read back (an ssh remote is not read back by default): check the ref "
                                          "with git ls-remote ssh://git@git.example/~/buyer/shop.git "
                                          "refs/heads/main") != std::string::npos,
                  ssh.outcome.reason);
    // The same left-behind delivery to an https remote is read back.
    const Recovered https = recover_after_post("https://git.example/buyer/shop.git");
    CHECK(https.read_back_asked == std::vector<std::string>{"https://git.example/buyer/shop.git"});
    CHECK_MESSAGE(https.outcome.observed_after.has_value(), https.outcome.reason);
  }
}

}  // namespace unit_recovery_ssh
