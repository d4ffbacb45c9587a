// media_type.hpp — comparing an HTTP Content-Type with the one expected.
//
// Smart-HTTP is recognised by its Content-Type alone: a dumb server, a login
// page or a proxy's error page answers 200 too, and its body must not be fed
// to the pkt-line parsers. Parameters after ';' (e.g. charset) are ignored
// and the type itself is compared without regard to case (RFC 9110 8.3.1,
// and what git's own client does).
#pragma once

#include <string_view>

#include "courier/result.hpp"

namespace courier::transport {

// True when the media type of `header_value` (the part before any ';',
// surrounding blanks removed) equals `expected`, ignoring ASCII case.
bool media_type_is(std::string_view header_value, std::string_view expected);

// Ok, or bad_content_type naming what was received and what was expected.
Result<void> expect_media_type(std::string_view header_value, std::string_view expected, std::string_view what);

}  // namespace courier::transport
