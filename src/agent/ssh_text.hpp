// ssh_text.hpp — how SSH keys are written as text: base64 (authorized_keys
// and known_hosts lines, the key file's armour), the one-line public key,
// and the SHA256 fingerprint ssh-keygen -l prints.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace courier::agent {

std::string base64_encode(std::string_view bytes);
// Standard base64 with padding; whitespace is not allowed. nullopt when
// malformed.
std::optional<std::string> base64_decode(std::string_view text);

// The algorithm name a public key blob starts with ("" when unreadable).
std::string blob_algorithm(std::string_view blob);
// "ssh-ed25519 AAAA..." (no comment).
std::string public_line_of(std::string_view blob);
// "SHA256:<base64 without padding>".
std::string fingerprint_of(std::string_view blob);

}  // namespace courier::agent
