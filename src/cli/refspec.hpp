// refspec.hpp — one `<refspec>` of `git courier push <remote> <refspec>`,
// read as git's parse_refspec reads a push refspec: `[+]<src>[:<dst>]`,
// `@` for HEAD, the last ':' splitting source from destination. Pure (no
// repository): what the words say, and which of them git would accept but
// this command cannot honour (it delivers the refs it is given by name: no
// wildcards, no negative refspecs, no "matching" `:`), each refused naming
// what git would do. `:<dst>` deletes <dst> (X-CLI6). Rule X-CLI1.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"

namespace courier::cli {

struct Refspec {
  bool force = false;              // a leading '+'
  bool deletes = false;            // `:<dst>` (or a name given with --delete): src is empty
  std::string src;                 // as given ("@" read as "HEAD"); empty only for a deletion
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
// refspec, `:`). `:<dst>` is a deletion (deletes, no src).
Result<Refspec> parse_refspec(const std::string& text);

// A word after `push --delete <remote>`: a ref's name to delete, as git
// reads it (a refspec with ':' is refused: "--delete only accepts plain
// target ref names"). Errors: invalid_argument.
Result<Refspec> parse_delete_refspec(const std::string& text);

// The refusal for more than one refspec where only one can be honoured
// (a remote's configured remote.<name>.push).
Error several_refspecs(const std::vector<std::string>& refspecs);

}  // namespace courier::cli
