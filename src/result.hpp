// result.hpp — errors as values at module boundaries.
//
// Every public function that can fail returns Result<T>: the value, or an
// Error naming a kind the caller can act on and a human message. Foreign
// errors (errno, libgit2, libcurl, nlohmann/json) are converted to Error in
// one place each and never cross a module boundary as exceptions.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace courier {

enum class Errc {
  // protocol (frame codec)
  frame_too_large,
  frame_empty,
  frame_truncated_length,
  frame_truncated_body,
  invalid_utf8,
  malformed_json,
  duplicate_key,
  // protocol (messages)
  missing_field,
  wrong_type,
  unknown_type,
  unknown_field,
  invalid_value,
  // protocol (state machine)
  hello_not_first,
  second_hello,
  version_mismatch,
  mint_unauthenticated,
  mints_over_cap,
  result_oid_mismatch,
  result_ref_mismatch,
  second_result,
  message_after_result,
  // transport (smart-HTTP receive-pack: pkt-line, advertisement, report-status)
  pkt_too_large,
  pkt_invalid_length,
  pkt_truncated,
  bad_content_type,
  advertisement_malformed,
  unsupported_object_format,
  capability_missing,
  remote_error,
  report_malformed,
  report_incomplete,
  report_mismatch,
  unpack_failed,
  // system
  os_error,
  spawn_failed,
  // configuration
  invalid_argument,
  // transport legs (libcurl)
  scheme_refused,
  tls_failed,
  connect_failed,
  http_status,
  http_redirect,
  http_auth,
  leg_aborted,
  leg_timeout,
  body_too_large,
  curl_refused,  // libcurl refused an option (or an info query): named in the message
};

struct Error {
  Errc code;
  std::string message;
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(Errc code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

const char* errc_name(Errc code);

}  // namespace courier
