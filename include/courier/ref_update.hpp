// ref_update.hpp — (public) one ref update of a delivery, whether a
// delivery's updates move together, and the bounds on a request's set of
// updates and push options.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "courier/update_mode.hpp"
#include "courier/words.hpp"

namespace courier {

// One ref update of a request: which ref, to which object, how it may move.
// The zero id (40 zeros) as `oid` deletes the ref (`git push origin :ref`):
// the remote must advertise delete-refs, and a ref it does not have is
// reported as git reports it (ng "... does not exist" or ok, the remote's
// word). A deletion moves no object, so no pack is sent for it; the update
// rule still applies its expect_old (the ref must be there at that id).
struct RefUpdate {
  std::string ref;  // a full ref name, e.g. refs/heads/main or refs/tags/v1
  std::string oid;  // the new id (full hex); the zero id deletes the ref
  UpdateMode update = UpdateMode::fast_forward;
  std::optional<std::string> expect_old;
  bool deletes() const;
  bool operator==(const RefUpdate&) const = default;
};

// Whether the updates of one delivery move together (git push --atomic).
//   automatic   atomic when there is more than one update (the default):
//               the server must advertise `atomic`, or the delivery ends
//               before anything is sent (transport_failed, naming it)
//   atomic      always atomic, as automatic, whatever the count
//   non_atomic  never: each ref succeeds or fails on its own, as
//               `git push --no-atomic`
#define COURIER_ATOMICITY_LIST(X) X(automatic) X(atomic) X(non_atomic)

COURIER_WORD_ENUM(Atomicity, COURIER_ATOMICITY_LIST);

// Bounds on one request (refused before anything is sent, with the field
// named): the updates of one delivery, its push options, and each option's
// length. git itself bounds an option only by its pkt-line (65,515 bytes);
// a delivery's options travel in its journal and its job frame, so they are
// held to a size that never crowds those.
inline constexpr std::size_t kMaxRefUpdates = 100;
inline constexpr std::size_t kMaxPushOptions = 32;
inline constexpr std::size_t kMaxPushOptionBytes = 4096;

}  // namespace courier
