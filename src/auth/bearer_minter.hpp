// bearer_minter.hpp — the `bearer:FILE` minter: a static token read by the
// parent from a file and sent as "Authorization: Bearer <token>" on every
// leg. The file's path and contents never reach the child's argv or
// environment; the header itself does cross the pipe (it must, to be sent),
// and unlike a key: token it is not bound to one leg.
#pragma once

#include <string>

#include "auth/minter.hpp"
#include "courier/result.hpp"

namespace courier::auth {

// Reads the token: surrounding whitespace trimmed. Errors: invalid_argument
// naming the problem — missing or unreadable file, an empty token, a token
// with characters that cannot appear in a header value (inner whitespace,
// control characters, non-ASCII).
Result<std::string> read_bearer_token(const std::string& path);

class BearerMinter : public Minter {
 public:
  explicit BearerMinter(std::string token);
  ~BearerMinter() override;
  BearerMinter(const BearerMinter&) = delete;
  BearerMinter& operator=(const BearerMinter&) = delete;

  // Errors: never, for a token read_bearer_token accepted.
  Result<std::string> mint(const LegRequest& request) override;
  // The same header for any body: the POST may stream.
  bool binds_payload() const override { return false; }

 private:
  std::string token_;
};

}  // namespace courier::auth
