// errc.cpp — names for error kinds, as they appear in logs and JSON.
#include "result.hpp"

namespace courier {

const char* errc_name(Errc code) {
  switch (code) {
#define X(n) case Errc::n: return #n;
    X(frame_too_large) X(frame_empty) X(frame_truncated_length) X(frame_truncated_body)
    X(invalid_utf8) X(malformed_json) X(duplicate_key) X(missing_field) X(wrong_type) X(unknown_type)
    X(unknown_field) X(invalid_value) X(hello_not_first) X(second_hello) X(version_mismatch)
    X(mint_unauthenticated) X(mints_over_cap) X(result_oid_mismatch) X(result_ref_mismatch) X(second_result)
    X(message_after_result) X(pkt_too_large) X(pkt_invalid_length) X(pkt_truncated)
    X(bad_content_type) X(advertisement_malformed) X(unsupported_object_format)
    X(capability_missing) X(remote_error) X(report_malformed) X(report_incomplete)
    X(report_mismatch) X(unpack_failed) X(os_error) X(spawn_failed) X(invalid_argument) X(scheme_refused) X(tls_failed) X(connect_failed) X(http_status) X(http_redirect) X(http_auth) X(leg_aborted) X(leg_timeout) X(body_too_large)
    X(curl_refused)
#undef X
  }
  return "unknown";
}

}  // namespace courier
