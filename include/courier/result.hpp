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

#include "courier/words.hpp"

namespace courier {

// The error kinds, once: the enum and errc_name() are both generated from
// this list, so a new kind cannot be missing its name.
#define COURIER_ERRC_LIST(X)                                                                   \
  /* protocol (frame codec) */                                                                 \
  X(frame_too_large)                                                                           \
  X(frame_empty)                                                                               \
  X(frame_truncated_length)                                                                    \
  X(frame_truncated_body)                                                                      \
  X(invalid_utf8)                                                                              \
  X(malformed_json)                                                                            \
  X(duplicate_key)                                                                             \
  X(json_too_large) /* JSON text over wire::kMaxJsonBytes */                                   \
  X(json_too_deep)  /* arrays and objects nested deeper than wire::kMaxJsonDepth */            \
  /* protocol (messages) */                                                                    \
  X(missing_field)                                                                             \
  X(wrong_type)                                                                                \
  X(unknown_type)                                                                              \
  X(unknown_field)                                                                             \
  X(invalid_value)                                                                             \
  /* protocol (state machine) */                                                               \
  X(hello_not_first)                                                                           \
  X(second_hello)                                                                              \
  X(version_mismatch)                                                                          \
  X(mint_unauthenticated)                                                                      \
  X(mints_over_cap)                                                                            \
  X(result_oid_mismatch)                                                                       \
  X(result_ref_mismatch)                                                                       \
  X(second_result)                                                                             \
  X(message_after_result)                                                                      \
  /* transport (smart-HTTP receive-pack: pkt-line, advertisement, report-status) */            \
  X(pkt_too_large)                                                                             \
  X(pkt_invalid_length)                                                                        \
  X(pkt_truncated)                                                                             \
  X(bad_content_type)                                                                          \
  X(advertisement_malformed)                                                                   \
  X(unsupported_object_format)                                                                 \
  X(capability_missing)                                                                        \
  X(remote_error)                                                                              \
  X(report_malformed)                                                                          \
  X(report_incomplete)                                                                         \
  X(report_mismatch)                                                                           \
  X(unpack_failed)                                                                             \
  /* system */                                                                                 \
  X(os_error)                                                                                  \
  X(disk_full) /* a write found no room: ENOSPC, or EDQUOT (the user's quota) */               \
  X(spawn_failed)                                                                              \
  /* configuration */                                                                          \
  X(invalid_argument)                                                                          \
  /* transport legs (libcurl) */                                                               \
  X(scheme_refused)                                                                            \
  X(tls_failed)                                                                                \
  X(connect_failed)                                                                            \
  X(proxy_failed) /* the proxy refused the CONNECT tunnel (a 407, or another answer) */        \
  X(http_status)                                                                               \
  X(http_redirect)                                                                             \
  X(http_auth)                                                                                 \
  X(leg_aborted)                                                                               \
  X(leg_timeout)                                                                               \
  X(body_too_large)                                                                            \
  X(curl_refused) /* libcurl refused an option (or an info query): named in the message */     \
  /* the delivery journal */                                                                   \
  X(journal_failed)   /* the journal cannot be opened, read or written */                      \
  X(journal_conflict) /* the journal already says otherwise (an id reused, a row finished) */  \
  /* the state backend (PostgreSQL) */                                                         \
  X(database_failed) /* a PostgreSQL operation failed or timed out (server named, redacted) */ \
  X(lease_lost)      /* a lane's lease could not be renewed, or was found gone */

COURIER_WORD_ENUM(Errc, COURIER_ERRC_LIST);

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
