// transport-report.cpp — T4: report-status from a real git
// http-backend, side-band demultiplexing, and every report that must not
// read as "delivered".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data/transport/captures.hpp"
#include "transport/pktline.hpp"
#include "transport/report.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_transport_report {

using namespace courier;
using namespace courier::transport;
namespace cap = courier::test::captures;

namespace {

constexpr std::string_view kMain = "refs/heads/main";

std::string pkt(std::string_view payload) { return *encode_pkt(payload); }
std::string band(char channel, std::string_view payload) { return pkt(std::string(1, channel) + std::string(payload)); }

// A plain report as receive-pack writes it.
std::string plain(std::initializer_list<std::string_view> lines) {
  std::string out;
  for (std::string_view line : lines) out += pkt(std::string(line) + "\n");
  return out + "0000";
}

// `inner` carried in band-1 packets of `chunk` bytes, then the closing flush.
std::string sideband(std::string_view inner, std::size_t chunk = 65000) {
  std::string out;
  for (std::size_t at = 0; at < inner.size(); at += chunk) out += band(1, inner.substr(at, chunk));
  return out + "0000";
}

Result<RefVerdict> verdict(std::string_view body, bool side_band) {
  auto parsed = parse_report(body, side_band);
  if (!parsed) return tl::unexpected<Error>(parsed.error());
  auto refs = judge_report(parsed->report, {std::string(kMain)});
  if (!refs) return tl::unexpected<Error>(refs.error());
  REQUIRE(refs->size() == 1);
  return refs->front();
}

Errc error_of(std::string_view body, bool side_band) {
  auto v = verdict(body, side_band);
  REQUIRE_FALSE(v.has_value());
  return v.error().code;
}

void check_delivered(std::string_view body, bool side_band) {
  auto v = verdict(body, side_band);
  REQUIRE(v.has_value());
  CHECK(v->ok);
  CHECK(v->reason.empty());
}

void check_rejected(std::string_view body, bool side_band, std::string_view reason) {
  auto v = verdict(body, side_band);
  REQUIRE(v.has_value());
  CHECK_FALSE(v->ok);
  CHECK(v->reason == reason);
}

}  // namespace

TEST_SUITE("transport") {
  TEST_CASE("T4: real create and update reports from git http-backend are delivered, plain and side-band") {
    check_delivered(cap::kCreateOk, false);
    check_delivered(cap::kUpdateOk, false);
    check_delivered(cap::kCreateOkSideband, true);
    check_delivered(cap::kUpdateOkSideband, true);

    auto parsed = parse_report(cap::kUpdateOkSideband, true);
    REQUIRE(parsed.has_value());
    CHECK(parsed->report == transport::Report{"ok", {transport::RefStatus{"refs/heads/main", true, ""}}});
    CHECK(parsed->progress.empty());
  }

  TEST_CASE("T4: a real stale-old-id report is rejected with the server's reason, and its progress relayed") {
    check_rejected(cap::kStaleNg, false, "failed to update ref");
    check_rejected(cap::kStaleNgSideband, true, "failed to update ref");
    auto parsed = parse_report(cap::kStaleNgSideband, true);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->progress.size() == 1);
    CHECK(parsed->progress[0].find("error: cannot lock ref 'refs/heads/main'") == 0);
  }

  TEST_CASE("T4: a real non-fast-forward report is rejected with the server's reason") {
    check_rejected(cap::kNonFastForwardNg, false, "non-fast-forward");
    check_rejected(cap::kNonFastForwardNgSideband, true, "non-fast-forward");
  }

  TEST_CASE("T4: a real report of a truncated upload is an unpack failure, not a rejection and not delivered") {
    for (auto [body, side_band] :
         {std::pair{cap::kTruncatedPack, false}, std::pair{cap::kTruncatedPackSideband, true}}) {
      auto v = verdict(body, side_band);
      REQUIRE_FALSE(v.has_value());
      CHECK(v.error().code == Errc::unpack_failed);
      CHECK(v.error().message.find("unpack-objects abnormal exit") != std::string::npos);
    }
    auto parsed = parse_report(cap::kTruncatedPackSideband, true);
    REQUIRE(parsed.has_value());
    CHECK(parsed->progress == std::vector<std::string>{"fatal: early EOF\n"});
    CHECK_FALSE(parsed->report.unpack_ok());
  }

  TEST_CASE("hook output on band 2 of a real server is returned for relaying, and a hook's refusal is a rejection") {
    auto parsed = parse_report(cap::kHookProgressSideband, true);
    REQUIRE(parsed.has_value());
    CHECK(parsed->progress == std::vector<std::string>{"courier-hook: checking push\n"});
    check_delivered(cap::kHookProgressSideband, true);
    check_rejected(cap::kHookDeclinedSideband, true, "pre-receive hook declined");
  }

  TEST_CASE("T4: every proper prefix of a real report fails: an HTTP 200 with a cut body is never delivered") {
    for (auto [body, side_band] :
         {std::pair{cap::kCreateOk, false}, std::pair{cap::kUpdateOk, false}, std::pair{cap::kCreateOkSideband, true},
          std::pair{cap::kUpdateOkSideband, true}, std::pair{cap::kHookProgressSideband, true}}) {
      for (std::size_t n = 0; n < body.size(); ++n) {
        CAPTURE(n);
        auto parsed = parse_report(body.substr(0, n), side_band);
        CHECK_FALSE(parsed.has_value());
        if (!parsed) {
          const Errc code = parsed.error().code;
          CHECK((code == Errc::pkt_truncated || code == Errc::report_incomplete));
        }
      }
    }
  }

  TEST_CASE("the reader gives the same report however the body is split across reads") {
    const std::string_view body = cap::kStaleNgSideband;
    auto whole = parse_report(body, true);
    REQUIRE(whole.has_value());
    for (std::size_t cut = 0; cut <= body.size(); ++cut) {
      ReportReader reader(true);
      auto a = reader.feed(body.substr(0, cut));
      auto b = reader.feed(body.substr(cut));
      REQUIRE(a.has_value());
      REQUIRE(b.has_value());
      auto report = reader.finish();
      REQUIRE(report.has_value());
      CHECK(*report == whole->report);
      CHECK(a->size() + b->size() == 1);
    }
  }

  TEST_CASE("report pkt-lines split across many band-1 packets are reassembled") {
    const std::string inner = plain({"unpack ok", "ok refs/heads/main"});
    for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7}}) {
      CAPTURE(chunk);
      check_delivered(sideband(inner, chunk), true);
    }
  }

  TEST_CASE("keepalives are accepted: 0004, and a band-1 packet with no payload") {
    check_delivered("0004" + pkt("unpack ok\n") + "0004" + pkt("ok refs/heads/main\n") + "0000", false);
    const std::string inner = plain({"unpack ok", "ok refs/heads/main"});
    check_delivered("0004" + band(1, "") + band(2, "working\r") + "0004" + sideband(inner), true);
  }

  TEST_CASE("band 3 is a fatal error carrying the remote's message, whatever came before") {
    const std::string body = band(2, "almost\n") + band(3, "out of disk space\n") + sideband(plain({"unpack ok"}));
    auto parsed = parse_report(body, true);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::remote_error);
    CHECK(parsed.error().message.find("out of disk space") != std::string::npos);
  }

  TEST_CASE("an unknown side-band channel is malformed") {
    const std::string report = sideband(plain({"unpack ok", "ok refs/heads/main"}));
    CHECK(error_of(band(4, "x") + report, true) == Errc::report_malformed);
  }

  TEST_CASE("a plain report read as side-band, or the reverse, never reads as delivered") {
    CHECK_FALSE(verdict(cap::kUpdateOk, true).has_value());
    CHECK_FALSE(verdict(cap::kUpdateOkSideband, false).has_value());
  }

  TEST_CASE("T4: a report without its unpack line fails") {
    CHECK(error_of(plain({"ok refs/heads/main"}), false) == Errc::report_malformed);
    CHECK(error_of("0000", false) == Errc::report_incomplete);
    CHECK(error_of(sideband("0000"), true) == Errc::report_incomplete);
    CHECK(error_of("", false) == Errc::report_incomplete);
    CHECK(error_of("", true) == Errc::report_incomplete);
  }

  TEST_CASE("T4: a report with no line for our ref fails") {
    CHECK(error_of(plain({"unpack ok"}), false) == Errc::report_incomplete);
    CHECK(error_of(sideband(plain({"unpack ok"})), true) == Errc::report_incomplete);
  }

  TEST_CASE("T4: a report naming only another ref fails, even one that differs by a suffix") {
    for (std::string_view other :
         {"ok refs/heads/other", "ok refs/heads/main2", "ok refs/heads/mai", "ng refs/heads/x no"}) {
      CAPTURE(other);
      CHECK(error_of(plain({"unpack ok", other}), false) == Errc::report_mismatch);
    }
    CHECK(error_of(plain({"unpack ok", "ok refs/heads/main", "ok refs/heads/other"}), false) == Errc::report_mismatch);
  }

  TEST_CASE("T4: a report that says both ok and ng for our ref, or says it twice, fails") {
    CHECK(error_of(plain({"unpack ok", "ok refs/heads/main", "ng refs/heads/main failed"}), false) ==
          Errc::report_mismatch);
    CHECK(error_of(plain({"unpack ok", "ng refs/heads/main failed", "ok refs/heads/main"}), false) ==
          Errc::report_mismatch);
    CHECK(error_of(plain({"unpack ok", "ok refs/heads/main", "ok refs/heads/main"}), false) == Errc::report_mismatch);
  }

  TEST_CASE("T4: ok for our ref beside an unpack failure is a contradiction, not a delivery") {
    CHECK(error_of(plain({"unpack index-pack abnormal exit", "ok refs/heads/main"}), false) == Errc::report_mismatch);
    CHECK(error_of(plain({"unpack failed"}), false) == Errc::unpack_failed);
  }

  TEST_CASE("T4: bytes after the report's flush fail the report") {
    CHECK(error_of(std::string(cap::kUpdateOk) + "0000", false) == Errc::report_malformed);
    CHECK(error_of(std::string(cap::kUpdateOk) + "x", false) == Errc::report_malformed);
    CHECK(error_of(std::string(cap::kUpdateOkSideband) + band(2, "late"), true) == Errc::report_malformed);
    // Inside band 1, after the report's own flush.
    CHECK(error_of(sideband(plain({"unpack ok", "ok refs/heads/main"}) + pkt("ok refs/heads/x\n")), true) ==
          Errc::report_malformed);
    // The outer flush arriving before the report has ended.
    CHECK(error_of(band(1, pkt("unpack ok\n")) + "0000", true) == Errc::report_incomplete);
    // The report complete but the side-band stream never closed.
    CHECK(error_of(band(1, plain({"unpack ok", "ok refs/heads/main"})), true) == Errc::report_incomplete);
  }

  TEST_CASE("lines that are not report-status lines are malformed") {
    CHECK(error_of(plain({"unpack ok", "option refname refs/heads/main"}), false) == Errc::report_malformed);
    CHECK(error_of(plain({"unpack ok", "ok "}), false) == Errc::report_malformed);
    CHECK(error_of(plain({"unpack "}), false) == Errc::report_malformed);
    CHECK(error_of(plain({"unpackok"}), false) == Errc::report_malformed);
    CHECK(error_of(pkt("unpack ok\n") + "0001" + "0000", false) == Errc::report_malformed);
  }

  TEST_CASE("an ERR packet in the report is a remote error") {
    CHECK(error_of(plain({"ERR denied by policy"}), false) == Errc::remote_error);
  }

  TEST_CASE("a cut pkt-line in the body is reported as truncation, and carries the remote's last words") {
    const std::string body = band(2, "fatal: the remote end hung up\n") + band(1, pkt("unpack ok\n")).substr(0, 9);
    auto parsed = parse_report(body, true);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::pkt_truncated);
    CHECK(parsed.error().message.find("fatal: the remote end hung up") != std::string::npos);
  }

  TEST_CASE("a rejection reason with control bytes is escaped for display; an empty one is named") {
    check_rejected(plain({"unpack ok", "ng refs/heads/main evil\x1b[31m"}), false, "evil\\x1b[31m");
    check_rejected(plain({"unpack ok", "ng refs/heads/main"}), false, "(no reason given)");
  }

  TEST_CASE("the POST response Content-Type must be the receive-pack result") {
    CHECK(check_result_content_type("application/x-git-receive-pack-result").has_value());
    CHECK(check_result_content_type("application/x-git-receive-pack-result; charset=binary").has_value());
    auto r = check_result_content_type("text/html");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::bad_content_type);
  }

  TEST_CASE("T4: report-status-v2 option lines follow an ok; a rewritten update is not the one asked for") {
    auto parse_v2 = [](std::string_view body) {
      ReportReader reader(false, true);
      if (auto fed = reader.feed(body); !fed) return Result<Report>(tl::unexpected(fed.error()));
      return reader.finish();
    };
    const std::string plain = pkt("unpack ok\n") + pkt("ok refs/heads/main\n") + pkt("option forced-update\n") + "0000";
    auto report = parse_v2(plain);
    REQUIRE(report.has_value());
    auto fine = judge_report(*report, {"refs/heads/main"});
    REQUIRE(fine.has_value());
    CHECK(fine->front().ok);
    const std::string rewritten =
        pkt("unpack ok\n") + pkt("ok refs/for/main\n") + pkt("option refname refs/heads/other\n") + "0000";
    auto moved = parse_v2(rewritten);
    REQUIRE(moved.has_value());
    auto verdict = judge_report(*moved, {"refs/for/main"});
    REQUIRE_FALSE(verdict.has_value());
    CHECK(verdict.error().code == Errc::report_mismatch);
    // Without v2 an option line is not part of the grammar.
    auto v1 = parse_report(plain, false);
    REQUIRE_FALSE(v1.has_value());
    CHECK(v1.error().code == Errc::report_malformed);
    // Nor before any ok.
    CHECK_FALSE(parse_v2(pkt("unpack ok\n") + pkt("option forced-update\n") + "0000").has_value());
  }

  TEST_CASE("T4: every ref sent needs exactly one line; one missing, one extra or one twice is not delivered") {
    auto parsed = parse_report(pkt("unpack ok\n") + pkt("ok refs/heads/a\n") + "0000", false);
    REQUIRE(parsed.has_value());
    auto missing = judge_report(parsed->report, {"refs/heads/a", "refs/tags/v1"});
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == Errc::report_incomplete);
    auto twice =
        parse_report(pkt("unpack ok\n") + pkt("ok refs/heads/a\n") + pkt("ng refs/heads/a x\n") + "0000", false);
    REQUIRE(twice.has_value());
    CHECK(judge_report(twice->report, {"refs/heads/a"}).error().code == Errc::report_mismatch);
    auto both = parse_report(
        pkt("unpack ok\n") + pkt("ng refs/tags/v1 hook declined\n") + pkt("ok refs/heads/a\n") + "0000", false);
    REQUIRE(both.has_value());
    auto v = judge_report(both->report, {"refs/heads/a", "refs/tags/v1"});
    REQUIRE(v.has_value());
    CHECK(v->at(0) == RefVerdict{"refs/heads/a", true, ""});
    CHECK(v->at(1) == RefVerdict{"refs/tags/v1", false, "hook declined"});
  }
}

}  // namespace unit_transport_report
