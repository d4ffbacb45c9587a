// refspec.hpp — one `<refspec>` of `git courier push <remote> <refspec>`,
// read as git's parse_refspec reads a push refspec: `[+]<src>[:<dst>]`,
// `@` for HEAD, the last ':' splitting source from destination. Pure (no
// repository): what the words say, and which of them git would accept but
// this command cannot honour (it delivers one object to one ref: no
// wildcards, no negative refspecs, no "matching" `:`, no deletion), each
// refused naming what git would do. Rule X-CLI1.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"

namespace courier::cli {

struct Refspec {
  bool force = false;              // a leading '+'
  std::string src;                 // as given ("@" read as "HEAD"); never empty
  std::optional<std::string> dst;  // after the last ':'; nullopt: no ':'
  std::string text;                // the refspec as the user wrote it, for messages
};

// git's check_refname_format with REFNAME_ALLOW_ONELEVEL: what a ref's name
// may be ("main", "refs/heads/main"; never "a..b", "x.lock", "@", "@{", a
// control character, a space or any of ~^:?*[\).
bool is_refname_format(std::string_view name);

// Errors: invalid_argument with git's words for a malformed refspec
// ("invalid refspec 'main:'"), or a refusal naming git's behaviour for one
// git would accept but this command cannot honour (a wildcard, a negative
// refspec, `:`, `:<dst>`).
Result<Refspec> parse_refspec(const std::string& text);

// The refusal for more than one refspec (git pushes each of them).
Error several_refspecs(const std::vector<std::string>& refspecs);

}  // namespace courier::cli
