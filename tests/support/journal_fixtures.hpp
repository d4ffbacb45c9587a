// journal_fixtures.hpp — the submission and entries the journal's tests
// write, one definition for the SQLite, PostgreSQL and contract suites.
#pragma once

#include <string>

#include "journal/journal.hpp"

namespace courier::test {

// A submission of `id` as a seller's host would make it; `host` empty: none
// recorded (a single-host journal).
inline journal::Submission journal_submission(const std::string& id, int attempt = 1,
                                              const std::string& host = "host-a") {
  journal::Submission s;
  s.id = id;
  s.attempt = attempt;
  s.repo = "/srv/repos/shop.git";
  s.remote = "https://git.example.com/buyer/shop.git";
  s.lane = "https://git.example.com/buyer/shop";
  s.ref = "refs/heads/main";
  s.oid = std::string(40, 'b');
  s.expect_old = std::string(40, 'a');
  s.deadline_unix_ms = 1'900'000'000'123;
  s.submitter = journal::ProcessIdentity{4242, 987654321, "5a1c6e3e-3c2b-4f7e-9d3a-0f1e2d3c4b5a"};
  s.host = host;
  return s;
}

inline journal::Entry journal_entry(journal::Step step, int attempt = 1, const std::string& detail = "{}") {
  return journal::Entry{step, attempt, journal::wall_now_ms(), detail};
}

}  // namespace courier::test
