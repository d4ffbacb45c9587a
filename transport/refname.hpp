// refname.hpp — which ref names a push may target.
//
// The command line sent to receive-pack names the ref verbatim, and the
// report must name it back byte for byte (T4), so the name is checked before
// anything is sent: git's check-ref-format rules, plus "must live under
// refs/" (HEAD, pseudo-refs and advertisement placeholders such as `.have`
// or `capabilities^{}` are never push targets).
#pragma once

#include <string_view>

namespace courier::transport {

// True when `name` is a full ref name under refs/ that git would accept.
bool is_valid_push_refname(std::string_view name);

}  // namespace courier::transport
