// report.hpp — the receive-pack report-status (the POST response).
//
// With report-status the server answers
//   pkt("unpack ok\n" | "unpack <error>\n")
//   pkt("ok <ref>\n") | pkt("ng <ref> <reason>\n") ... flush
// When side-band-64k was negotiated, that stream is cut into the payloads of
// band-1 packets (a band byte 1 before each), interleaved with band-2
// progress text and possibly a band-3 fatal message, and the whole is closed
// by a flush of its own. git http-backend answers "200 OK" before
// receive-pack has even read the pack, so the status line proves nothing:
// only a complete, consistent report naming our ref says "delivered" (T4).
// Anything short of that is an error, never success.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/legs.hpp"
#include "courier/result.hpp"
#include "transport/pktline.hpp"

namespace courier::transport {

inline constexpr std::string_view kResultContentType = wire::leg_spec(wire::Leg::receive_pack).response_type;

struct RefStatus {
  std::string ref;
  bool ok = false;
  std::string reason;  // the remote's words after `ng <ref> `; empty for ok
  bool operator==(const RefStatus&) const = default;
};

// A syntactically complete report, as the remote sent it (bytes unescaped).
struct Report {
  std::string unpack;           // "ok", or the remote's unpack error
  std::vector<RefStatus> refs;  // in the order received
  bool unpack_ok() const { return unpack == "ok"; }
  bool operator==(const Report&) const = default;
};

// Reads a POST response body incrementally: feed() what arrives, relay the
// progress it returns, and call finish() at the end of the body.
class ReportReader {
 public:
  explicit ReportReader(bool side_band) : side_band_(side_band) {}

  // Returns the band-2 progress messages completed by these bytes, raw (they
  // may hold \r for progress meters; escape them before showing them
  // anywhere that interprets control bytes). Errors: report_malformed,
  // remote_error (band 3, or an ERR packet), the pkt-line errors. After an
  // error the reader stays failed.
  Result<std::vector<std::string>> feed(std::string_view bytes);

  // The report, once the body has ended. Errors: those of feed(), or
  // pkt_truncated / report_incomplete when the body stopped early.
  Result<Report> finish();

 private:
  Result<void> on_outer(const Pkt& pkt, std::vector<std::string>& progress);
  Result<void> drain_inner();
  Result<void> on_line(const Pkt& pkt);
  tl::unexpected<Error> failed(Errc code, std::string message);
  std::string last_words() const;

  enum class Stage { unpack, refs, done };
  bool side_band_;
  PktDecoder outer_;
  PktDecoder inner_;  // band-1 payloads, side-band only
  Stage stage_ = Stage::unpack;
  bool closed_ = false;  // the final flush arrived: nothing may follow
  Report report_;
  std::string last_progress_;
  std::optional<Error> failed_;
};

struct ParsedReport {
  Report report;
  std::vector<std::string> progress;
};

// The whole body at once: ReportReader fed once, then finished.
Result<ParsedReport> parse_report(std::string_view body, bool side_band);

// Ok when the POST response's Content-Type is the receive-pack result
// (parameters after ';' tolerated). Errors: bad_content_type.
Result<void> check_result_content_type(std::string_view content_type);

// What the report says about one ref the request updated.
struct RefVerdict {
  std::string ref;
  bool ok = false;
  std::string reason;  // ng: the remote's reason, escaped for display
  bool operator==(const RefVerdict&) const = default;
};

// What the report says about the refs the request updated (`refs`, in
// that order): `unpack ok` and exactly one line for each of them, ok or ng
// (T4 for every ref). Everything else is an error: unpack_failed (the
// remote could not unpack the pack), report_incomplete (no line for one of
// `refs`), report_mismatch (a line for a ref not in the request, several
// lines for one ref, or `ok` for a ref beside an unpack failure).
Result<std::vector<RefVerdict>> judge_report(const Report& report, const std::vector<std::string>& refs);

}  // namespace courier::transport
