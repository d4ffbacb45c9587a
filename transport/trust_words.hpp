// trust_words.hpp — the trust anchor of a TLS leg said in words (T1): which
// CA file, and where its setting came from, or the system store with the
// file and directory it reads; and the advice for a certificate nobody
// here trusts, which never suggests setting what is already set. Said by
// the child in a TLS failure and by the CLI with -v before the push, so
// both read the anchor the same way.
#pragma once

#include <optional>
#include <string>

namespace courier::transport {

// "the CA file /x (GIT_SSL_CAINFO)"; "the CA file /x (--ca-file, trusted
// alone)"; "the system store (/etc/ssl/certs/ca-certificates.crt,
// /etc/ssl/certs)". `source` names the setting ca_file came from; none:
// "the CA file /x". The system store is what this process's libcurl reads:
// SSL_CERT_FILE / SSL_CERT_DIR when set, else its built-in defaults.
std::string trust_anchor_words(const std::optional<std::string>& ca_file, const std::optional<std::string>& source);

// What to do about an unverified certificate under that anchor: check the
// file that is trusted, and offer only the settings that would change the
// anchor and are not set already (--ca-file overrides everything;
// GIT_SSL_CAINFO overrides http.sslCAInfo).
std::string trust_hint(const std::optional<std::string>& ca_file, const std::optional<std::string>& source);

}  // namespace courier::transport
