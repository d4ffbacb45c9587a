// tree_removal.hpp — a directory's entries and the removal of a tree in it,
// through descriptors only (openat with O_NOFOLLOW from the directory's
// own): no name is ever resolved through a symbolic link, and a removal
// stops at an instant rather than running for as long as the tree is big.
#pragma once

#include <string>
#include <vector>

#include "sys/clock.hpp"

namespace courier::sys {

// A tree deeper than this is not walked to the bottom (what this program
// removes is flat); its removal never finishes rather than overflowing.
inline constexpr int kMaxRemovalDepth = 32;

// The names in the directory `dir_fd` (not "." or ".."); empty when it
// cannot be read.
std::vector<std::string> names_in(int dir_fd);

// `name` in `dir_fd` is a real directory (not a symbolic link) owned by the
// effective uid.
bool is_own_directory_at(int dir_fd, const std::string& name);

// `name` (relative, may hold '/') exists in `dir_fd`, a final symbolic link
// not followed.
bool exists_at(int dir_fd, const std::string& name);

// Removes `name` in `dir_fd` and everything below it, giving up at `until`
// (a CLOCK_MONOTONIC instant). True when it is gone.
bool remove_tree_until(int dir_fd, const std::string& name, MonoNs until);

}  // namespace courier::sys
