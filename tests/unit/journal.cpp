// journal.cpp — the delivery journal (src/journal/): what the SQLite
// backend alone must prove, on real files in a fresh temporary directory
// (file modes, corrupt, read-only and locked journals, the cost of a durable
// append), the outcome codec, and process identity. The journal's contract,
// which both backends keep, is proven once for both in
// integration/journal-contract.cpp. Each case names the rule it proves (J1-J4, H1).
// No process is started: the read-only cases drop CAP_DAC_OVERRIDE in one thread of this
// one (the suite runs as root, and root ignores permission bits).
#include <doctest/doctest.h>
#include <linux/capability.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "journal/journal.hpp"
#include "journal_fixtures.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_journal {

using namespace courier;
using namespace courier::journal;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::lstat(path.c_str(), &st) == 0, path);
  return st.st_mode & 07777;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

using test::journal_entry;
using test::journal_submission;

// No host: a single-host journal.
Submission submission(const std::string& id, int attempt = 1) { return journal_submission(id, attempt, ""); }

Entry entry(Step step, int attempt = 1, const std::string& detail = "{}") {
  return journal_entry(step, attempt, detail);
}

std::unique_ptr<Journal> open_ok(const std::string& path) {
  auto j = open_sqlite(path);
  REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
  return std::move(*j);
}

void require_ok(const Result<void>& r) { REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message)); }

bool has(const Error& e, const std::string& words) { return e.message.find(words) != std::string::npos; }

// Runs fn on a thread of its own whose effective capabilities no longer
// include CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (capset changes the
// calling thread only), so permission bits bind even for root. Returns
// false when the drop could not be made.
bool without_dac_override(const std::function<void()>& fn) {
  bool dropped = false;
  std::thread t([&] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) != 0) return;
    for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) {
      data[cap / 32].effective &= ~(1u << (cap % 32));
    }
    if (::syscall(SYS_capset, &header, data) != 0) return;
    dropped = true;
    fn();
  });
  t.join();
  return dropped;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_SUITE("journal") {
  TEST_CASE("H1: the journal's directories are created 0700 and its files 0600, whatever the umask") {
    for (const mode_t mask : {mode_t{0}, mode_t{0277}}) {
      test::TempDir t;
      const std::string dir = t.path() + "/state/git-courier";
      const std::string path = dir + "/journal.sqlite";
      const mode_t old = ::umask(mask);
      auto j = open_sqlite(path);
      Result<void> wrote = j ? (*j)->submit(submission("d"), 1) : Result<void>();
      ::umask(old);
      REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
      require_ok(wrote);
      CAPTURE(mask);
      CHECK(mode_of(t.path() + "/state") == 0700);
      CHECK(mode_of(dir) == 0700);
      CHECK(mode_of(path) == 0600);
      CHECK(mode_of(path + "-wal") == 0600);
      CHECK(mode_of(path + "-shm") == 0600);
    }
  }

  TEST_CASE("H1: an existing journal directory is used as it is, never chmodded") {
    test::TempDir t;
    const std::string dir = t.path() + "/mine";
    REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
    REQUIRE(::chmod(dir.c_str(), 0751) == 0);  // readable by others is not unsafe
    open_ok(dir + "/journal.sqlite");
    CHECK(mode_of(dir) == 0751);
  }

  TEST_CASE("H1: a journal directory writable by its group or others is refused and left as it was") {
    for (const mode_t mode : {mode_t{0777}, mode_t{0770}, mode_t{01777}}) {
      test::TempDir t;
      const std::string dir = t.path() + "/shared";
      REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
      REQUIRE(::chmod(dir.c_str(), mode) == 0);
      auto j = open_sqlite(dir + "/journal.sqlite");
      REQUIRE_FALSE(j.has_value());
      CAPTURE(mode);
      CHECK(j.error().code == Errc::journal_failed);
      CHECK_MESSAGE(has(j.error(), "writable by its group or by other users"), j.error().message);
      CHECK_MESSAGE(has(j.error(), dir), j.error().message);
      CHECK(mode_of(dir) == mode);
      CHECK(std::filesystem::is_empty(dir));
    }
  }

  TEST_CASE("H1: a journal directory that is a symbolic link, or not a directory, is refused") {
    test::TempDir t;
    const std::string target = t.path() + "/real";
    REQUIRE(::mkdir(target.c_str(), 0700) == 0);
    const std::string link = t.path() + "/link";
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    auto j = open_sqlite(link + "/journal.sqlite");
    REQUIRE_FALSE(j.has_value());
    CHECK_MESSAGE(has(j.error(), "symbolic link"), j.error().message);
    CHECK(std::filesystem::is_empty(target));
    test::write_file(t.path() + "/plain", "x");
    auto k = open_sqlite(t.path() + "/plain/journal.sqlite");
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().code == Errc::journal_failed);
  }

  TEST_CASE("H1: a symbolic link in place of the journal file is refused and the file it names is untouched") {
    test::TempDir t;
    const std::string target = t.path() + "/precious";
    test::write_file(target, "keep me");
    REQUIRE(::chmod(target.c_str(), 0644) == 0);
    const std::string path = t.path() + "/journal.sqlite";
    REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
    auto j = open_sqlite(path);
    REQUIRE_FALSE(j.has_value());
    CHECK(j.error().code == Errc::journal_failed);
    CHECK_MESSAGE(has(j.error(), "symbolic link"), j.error().message);
    CHECK(test::read_file(target) == "keep me");
    CHECK(mode_of(target) == 0644);
    CHECK_FALSE(exists(path + "-wal"));
  }

  TEST_CASE("H1: a journal file writable by others, or not a regular file, is refused") {
    test::TempDir t;
    const std::string path = t.path() + "/journal.sqlite";
    test::write_file(path, "");
    REQUIRE(::chmod(path.c_str(), 0666) == 0);
    auto j = open_sqlite(path);
    REQUIRE_FALSE(j.has_value());
    CHECK_MESSAGE(has(j.error(), "writable by its group or by other users"), j.error().message);
    CHECK(mode_of(path) == 0666);
    const std::string fifo = t.path() + "/fifo.sqlite";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto k = open_sqlite(fifo);
    REQUIRE_FALSE(k.has_value());
    CHECK_MESSAGE(has(k.error(), "not a regular file"), k.error().message);
  }

  TEST_CASE("a corrupt journal file is refused with SQLite's words and the path, and is not rewritten") {
    test::TempDir t;
    const std::string path = t.path() + "/journal.sqlite";
    std::mt19937 gen(7);
    std::string garbage(4096, '\0');
    for (char& c : garbage) c = static_cast<char>(gen() & 0xff);
    test::write_file(path, garbage);
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    auto j = open_sqlite(path);
    REQUIRE_FALSE(j.has_value());
    CHECK(j.error().code == Errc::journal_failed);
    CHECK_MESSAGE(has(j.error(), "file is not a database"), j.error().message);
    CHECK_MESSAGE(has(j.error(), path), j.error().message);
    CHECK(test::read_file(path) == garbage);
  }

  TEST_CASE("a read-only journal file is refused when opened, never a silent success") {
    test::TempDir t;
    const std::string path = t.path() + "/journal.sqlite";
    require_ok(open_ok(path)->submit(submission("d"), 1));
    REQUIRE(::chmod(path.c_str(), 0400) == 0);
    Result<std::unique_ptr<Journal>> j = fail(Errc::os_error, "not run");
    int direct_open = 0;
    const bool dropped = without_dac_override([&] {
      const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      direct_open = fd >= 0 ? 0 : errno;
      if (fd >= 0) ::close(fd);
      j = open_sqlite(path);
    });
    REQUIRE_MESSAGE(dropped, "could not drop CAP_DAC_OVERRIDE in a thread");
    REQUIRE_MESSAGE(direct_open == EACCES, "the permission bits do not bind here; the case proves nothing");
    REQUIRE_FALSE(j.has_value());
    CHECK(j.error().code == Errc::journal_failed);
    CHECK_MESSAGE(has(j.error(), "readonly database"), j.error().message);
    CHECK_MESSAGE(has(j.error(), "cannot write"), j.error().message);
    CHECK_MESSAGE(has(j.error(), path), j.error().message);
  }

  TEST_CASE("a journal in a read-only directory is refused (WAL cannot make its -wal and -shm files)") {
    test::TempDir t;
    const std::string dir = t.path() + "/ro";
    const std::string path = dir + "/journal.sqlite";
    require_ok(open_ok(path)->submit(submission("d"), 1));
    // The journal keeps its WAL between connections; a plain connection's
    // close checkpoints it into the database and removes -wal and -shm, so
    // the next open must create them.
    {
      sqlite3* plain = nullptr;
      REQUIRE(sqlite3_open_v2(path.c_str(), &plain, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_exec(plain, "SELECT count(*) FROM deliveries", nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(plain);
    }
    REQUIRE_FALSE(exists(path + "-wal"));
    REQUIRE(::chmod(dir.c_str(), 0500) == 0);
    std::optional<Error> refused;  // from open_sqlite or from the first write; none: both succeeded
    const bool dropped = without_dac_override([&] {
      auto j = open_sqlite(path);
      if (!j) {
        refused = j.error();
        refused->message = "open_sqlite: " + refused->message;
        return;
      }
      if (auto wrote = (*j)->submit(submission("e"), 2); !wrote) {
        refused = wrote.error();
        refused->message = "first write: " + refused->message;
      }
    });
    REQUIRE(::chmod(dir.c_str(), 0700) == 0);
    REQUIRE(dropped);
    REQUIRE_MESSAGE(refused.has_value(), "a journal in a read-only directory opened and took a write");
    CHECK_MESSAGE(refused->code == Errc::journal_failed, refused->message);
    CHECK_MESSAGE(has(*refused, path), refused->message);
    CHECK_MESSAGE(has(*refused, "its directory is read-only"), refused->message);
    MESSAGE("read-only directory: " << refused->message);
  }

  TEST_CASE("a lock held by another connection fails a submit with journal_failed after kLockWaitMs, not later") {
    test::TempDir t;
    const std::string path = t.path() + "/journal.sqlite";
    auto j = open_ok(path);
    sqlite3* other = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &other, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
    const auto start = std::chrono::steady_clock::now();
    auto r = j->submit(submission("d"), 1);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    test::report("journal lock", "submit refused after", ms, "ms");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::journal_failed);
    CHECK_MESSAGE(has(r.error(), "database is locked"), r.error().message);
    CHECK_MESSAGE(has(r.error(), path), r.error().message);
    CHECK(ms >= static_cast<double>(kLockWaitMs) - 50);
    CHECK(ms <= static_cast<double>(kLockWaitMs) + 1000);
    // Nothing half-written, and the journal works once the lock is gone.
    CHECK_FALSE(j->find("d").value().has_value());
    require_ok(j->submit(submission("d"), 1));
  }

  TEST_CASE("J1: the cost of a durable append (synced) against an ordinary one, measured") {
    test::TempDir t;
    auto j = open_ok(t.path() + "/journal.sqlite");
    require_ok(j->submit(submission("d"), 1));
    constexpr int kRuns = 50;
    std::vector<double> durable, ordinary;
    for (int i = 0; i < kRuns; ++i) {
      for (bool sync : {true, false}) {
        const auto start = std::chrono::steady_clock::now();
        require_ok(j->append("d", entry(Step::advertised), sync));
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        (sync ? durable : ordinary).push_back(ms);
      }
    }
    MESSAGE("journal append, median of " << kRuns << ": durable " << median(durable) << " ms, ordinary "
                                         << median(ordinary) << " ms");
    test::report("journal append", "durable (median of 50)", median(durable), "ms");
    test::report("journal append", "ordinary (median of 50)", median(ordinary), "ms");
    CHECK(j->find("d").value()->entries.size() == 2 * kRuns + 1);
  }

  TEST_CASE("outcome_detail and outcome_from_detail carry every recorded field through") {
    Outcome o;
    o.kind = OutcomeKind::cancel_uncertain;
    o.reason = "revoked; the stop could not be confirmed \xff";  // invalid UTF-8 is replaced, never thrown
    o.delivery_id = "d-7";
    o.attempt = 3;
    o.remote_effect = RemoteEffect::possible;
    o.old_oid = std::string(40, 'a');
    o.objects = 12;
    o.bytes_sent = 123456789012ULL;
    o.kill_domain = "cgroup";
    o.stop_failure = OutcomeKind::unreaped;
    o.revoke_cause = "caller";
    o.scratch_kept = "/tmp/courier-xyz";
    o.journal_error = "journal /x: disk full";
    o.dispatched = true;
    o.child.pid = 31337;
    o.observed_after = ObservedAfter{std::string(40, 'b'), 1'800'000'000'999, true, ""};
    auto back = outcome_from_detail(outcome_detail(o));
    REQUIRE_MESSAGE(back.has_value(), (back ? std::string() : back.error().message));
    CHECK(back->kind == o.kind);
    CHECK(back->reason.rfind("revoked; the stop could not be confirmed ", 0) == 0);
    CHECK(back->delivery_id == o.delivery_id);
    CHECK(back->attempt == 3);
    CHECK(back->remote_effect == RemoteEffect::possible);
    CHECK(back->old_oid == o.old_oid);
    CHECK(back->objects == o.objects);
    CHECK(back->bytes_sent == o.bytes_sent);
    CHECK(back->kill_domain == "cgroup");
    CHECK(back->stop_failure == OutcomeKind::unreaped);
    CHECK(back->revoke_cause == "caller");
    CHECK(back->scratch_kept == o.scratch_kept);
    CHECK(back->journal_error == o.journal_error);
    CHECK(back->dispatched);
    CHECK(back->child.pid == 31337);
    REQUIRE(back->observed_after.has_value());
    CHECK(back->observed_after->oid == o.observed_after->oid);
    CHECK(back->observed_after->at_unix_ms == o.observed_after->at_unix_ms);
    CHECK(back->observed_after->matches_this_delivery);
    // Absent stays absent.
    auto bare = outcome_from_detail(outcome_detail(Outcome{}));
    REQUIRE(bare.has_value());
    CHECK_FALSE(bare->old_oid.has_value());
    CHECK_FALSE(bare->bytes_sent.has_value());
    CHECK_FALSE(bare->observed_after.has_value());
    CHECK_FALSE(bare->stop_failure.has_value());
  }

  TEST_CASE("outcome_from_detail refuses what is not an outcome with journal_failed, never an exception") {
    for (const char* bad :
         {"", "not json", "[1,2]", "{}", "{\"kind\":\"delivered\"}", "{\"kind\":\"nope\",\"remote_effect\":\"none\"}",
          "{\"kind\":7,\"remote_effect\":\"none\"}", "{\"kind\":\"delivered\",\"remote_effect\":\"maybe\"}"}) {
      CAPTURE(bad);
      auto r = outcome_from_detail(bad);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::journal_failed);
    }
    // Fields of the wrong type are left at their defaults, not thrown.
    auto odd = outcome_from_detail(R"({"kind":"revoked","remote_effect":"none","attempt":"x","objects":-1,"child":3})");
    REQUIRE(odd.has_value());
    CHECK(odd->kind == OutcomeKind::revoked);
    CHECK_FALSE(odd->objects.has_value());
    CHECK(detail_text(R"({"cause":"ctrl-c","n":1})", "cause") == "ctrl-c");
    CHECK(detail_text(R"({"cause":"ctrl-c","n":1})", "n").empty());
    CHECK(detail_text("{broken", "cause").empty());
    CHECK(detail_text("[]", "cause").empty());
  }

  TEST_CASE("every step's name reads back as that step; an unknown name is none") {
    for (Step s : {Step::submitted, Step::claimed, Step::dispatched, Step::advertised, Step::post_started,
                   Step::answered, Step::revoke_requested, Step::finished, Step::stop_confirmed}) {
      CHECK(step_from_name(step_name(s)) == s);
    }
    CHECK(std::string(step_name(Step::post_started)) == "post_started");
    CHECK_FALSE(step_from_name("Finished").has_value());
    CHECK_FALSE(step_from_name("").has_value());
  }

  TEST_CASE("J3: a process is alive only with the same pid, start time and boot, never by pid alone") {
    const std::string boot = boot_id();
    CHECK(boot.size() == 36);
    CHECK(boot.find('\n') == std::string::npos);
    auto me = identify(::getpid());
    REQUIRE(me.has_value());
    CHECK(me->pid == ::getpid());
    CHECK(me->boot_id == boot);
    CHECK(me->start_ticks > 0);
    CHECK(is_alive(*me));
    ProcessIdentity earlier = *me;
    earlier.start_ticks -= 1;  // the same pid, an earlier process
    CHECK_FALSE(is_alive(earlier));
    ProcessIdentity other_boot = *me;
    other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
    CHECK_FALSE(is_alive(other_boot));
    CHECK_FALSE(is_alive(ProcessIdentity{}));
    CHECK_FALSE(identify(0x3fffffff).has_value());  // above any pid_max
    CHECK(wall_now_ms() > 1'600'000'000'000);
  }
}

}  // namespace unit_journal
