// lane.hpp — the cross-process side of a lane: the lock file's name.
//
// Which remotes share a lane is decided by the lane key (wire/remote.hpp,
// rule H2); this turns a key into a file name under the lane directory.
#pragma once

#include <string>

namespace courier::seat {

// A file name for the lane's cross-process lock: a readable prefix plus a
// 64-bit hash of the key (distinct keys that collide only over-serialise).
std::string lane_lock_name(const std::string& key);

}  // namespace courier::seat
