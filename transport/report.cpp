// report.cpp — reading report-status, side-band demultiplexing, and the verdict.
#include "transport/report.hpp"

#include <algorithm>

#include "transport/media_type.hpp"
#include "wire/text.hpp"

namespace courier::transport {
namespace {

constexpr char kBandData = 1;
constexpr char kBandProgress = 2;
constexpr char kBandFatal = 3;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

tl::unexpected<Error> ReportReader::failed(Errc code, std::string message) {
  // The last progress text is often the remote's only explanation (e.g.
  // "fatal: early EOF" before a cut body), so it travels with the error.
  failed_ = Error{code, "report-status: " + std::move(message) + last_words()};
  return tl::unexpected<Error>(*failed_);
}

std::string ReportReader::last_words() const {
  const std::string_view said = wire::chomp(last_progress_);
  if (said.empty()) return {};
  return " (the remote last said: \"" + wire::server_text(said) + "\")";
}

Result<std::vector<std::string>> ReportReader::feed(std::string_view bytes) {
  if (failed_) return tl::unexpected<Error>(*failed_);
  outer_.feed(bytes);
  std::vector<std::string> progress;
  for (;;) {
    if (closed_ && outer_.buffered() > 0) return failed(Errc::report_malformed, "bytes after the final flush");
    auto next = outer_.next();
    if (!next) return failed(next.error().code, next.error().message);
    if (!*next) break;
    auto handled = on_outer(**next, progress);
    if (!handled) return tl::unexpected<Error>(handled.error());
  }
  return progress;
}

Result<void> ReportReader::on_outer(const Pkt& pkt, std::vector<std::string>& progress) {
  if (!side_band_) {
    auto line = on_line(pkt);
    if (line && stage_ == Stage::done) closed_ = true;
    return line;
  }
  switch (pkt.kind) {
    case PktKind::flush:
      if (stage_ != Stage::done) {
        return failed(Errc::report_incomplete, "side-band stream closed before the report ended");
      }
      closed_ = true;
      return {};
    case PktKind::delim:
    case PktKind::response_end:
      return failed(Errc::report_malformed, "unexpected delim or response-end packet");
    case PktKind::data:
      break;
  }
  if (pkt.payload.empty()) return {};  // keepalive
  const std::string_view rest = std::string_view(pkt.payload).substr(1);
  switch (pkt.payload.front()) {
    case kBandData:
      // Report pkt-lines may straddle band-1 packets; inner_ reassembles them.
      inner_.feed(rest);
      return drain_inner();
    case kBandProgress:
      if (!rest.empty()) {
        last_progress_.assign(rest);
        progress.emplace_back(rest);
      }
      return {};
    case kBandFatal:
      return failed(Errc::remote_error, "remote fatal error: \"" + wire::server_text(rest) + "\"");
    default:
      return failed(Errc::report_malformed,
                    "unknown side-band channel " +
                        std::to_string(static_cast<unsigned>(static_cast<unsigned char>(pkt.payload.front()))));
  }
}

Result<void> ReportReader::drain_inner() {
  for (;;) {
    auto next = inner_.next();
    if (!next) return failed(next.error().code, "inside side-band data: " + next.error().message);
    if (!*next) return {};
    auto line = on_line(**next);
    if (!line) return line;
  }
}

Result<void> ReportReader::on_line(const Pkt& pkt) {
  if (stage_ == Stage::done) return failed(Errc::report_malformed, "data after the report's flush");
  switch (pkt.kind) {
    case PktKind::flush:
      if (stage_ == Stage::unpack) return failed(Errc::report_incomplete, "the report has no unpack line");
      stage_ = Stage::done;
      return {};
    case PktKind::delim:
    case PktKind::response_end:
      return failed(Errc::report_malformed, "unexpected delim or response-end packet");
    case PktKind::data:
      break;
  }
  if (pkt.payload.empty()) return {};  // keepalive
  const std::string_view line = wire::chomp(pkt.payload);
  if (starts_with(line, "ERR ")) {
    return failed(Errc::remote_error, "remote error: \"" + wire::server_text(line.substr(4)) + "\"");
  }
  if (stage_ == Stage::unpack) {
    constexpr std::string_view kUnpack = "unpack ";
    if (!starts_with(line, kUnpack) || line.size() == kUnpack.size()) {
      return failed(Errc::report_malformed, "expected \"unpack ...\", got \"" + wire::printable(line) + "\"");
    }
    report_.unpack.assign(line.substr(kUnpack.size()));
    stage_ = Stage::refs;
    return {};
  }
  RefStatus status;
  if (starts_with(line, "ok ")) {
    status.ok = true;
    status.ref.assign(line.substr(3));
  } else if (starts_with(line, "ng ")) {
    const std::string_view rest = line.substr(3);
    const std::size_t space = rest.find(' ');
    status.ref.assign(rest.substr(0, space));
    if (space != std::string_view::npos) status.reason.assign(rest.substr(space + 1));
  } else {
    return failed(Errc::report_malformed, "unexpected report line \"" + wire::printable(line) + "\"");
  }
  if (status.ref.empty() || status.ref.find(' ') != std::string::npos) {
    return failed(Errc::report_malformed, "bad ref in report line \"" + wire::printable(line) + "\"");
  }
  report_.refs.push_back(std::move(status));
  return {};
}

Result<Report> ReportReader::finish() {
  if (failed_) return tl::unexpected<Error>(*failed_);
  if (closed_) return report_;
  if (auto end = outer_.finish(); !end) return failed(end.error().code, end.error().message);
  if (side_band_ && stage_ != Stage::done) {
    if (auto end = inner_.finish(); !end) {
      return failed(end.error().code, "inside side-band data: " + end.error().message);
    }
  }
  switch (stage_) {
    case Stage::unpack:
      return failed(Errc::report_incomplete, "the response ended before the report began");
    case Stage::refs:
      return failed(Errc::report_incomplete, "the response ended before the report's flush");
    case Stage::done:
      break;
  }
  return failed(Errc::report_incomplete, "the side-band stream ended without its final flush");
}

Result<ParsedReport> parse_report(std::string_view body, bool side_band) {
  ReportReader reader(side_band);
  auto progress = reader.feed(body);
  if (!progress) return tl::unexpected<Error>(progress.error());
  auto report = reader.finish();
  if (!report) return tl::unexpected<Error>(report.error());
  return ParsedReport{std::move(*report), std::move(*progress)};
}

Result<void> check_result_content_type(std::string_view content_type) {
  return expect_media_type(content_type, kResultContentType, "the receive-pack response");
}

Result<std::vector<RefVerdict>> judge_report(const Report& report, const std::vector<std::string>& refs) {
  std::vector<const RefStatus*> lines(refs.size(), nullptr);
  for (const RefStatus& status : report.refs) {
    const auto at = std::find(refs.begin(), refs.end(), status.ref);
    if (at == refs.end()) {
      return fail(Errc::report_mismatch,
                  "report-status names " + wire::printable(status.ref) + ", which was not in the request");
    }
    const auto i = static_cast<std::size_t>(at - refs.begin());
    if (lines[i] != nullptr) {
      return fail(Errc::report_mismatch, "report-status has more than one line for " + wire::printable(status.ref));
    }
    lines[i] = &status;
  }
  if (!report.unpack_ok()) {
    for (const RefStatus* line : lines) {
      if (line != nullptr && line->ok) {
        return fail(Errc::report_mismatch, "report-status says ok for " + wire::printable(line->ref) +
                                               " although unpacking failed: " + wire::printable(report.unpack));
      }
    }
    return fail(Errc::unpack_failed, "the remote could not unpack the pack: " + wire::printable(report.unpack));
  }
  std::vector<RefVerdict> out;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (lines[i] == nullptr) {
      return fail(Errc::report_incomplete, "report-status has no line for " + wire::printable(refs[i]));
    }
    const RefStatus& line = *lines[i];
    out.push_back(RefVerdict{refs[i], line.ok,
                             line.ok               ? std::string()
                             : line.reason.empty() ? "(no reason given)"
                                                   : wire::server_text(line.reason)});
  }
  return out;
}

}  // namespace courier::transport
