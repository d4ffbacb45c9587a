// advertisement.hpp — the receive-pack ref advertisement (the GET leg).
//
// `GET <repo>/info/refs?service=git-receive-pack` answers with (over ssh,
// git-receive-pack says the same without the service line and its flush)
//   pkt("# service=git-receive-pack\n") flush
//   pkt("<oid> <ref>\0<capabilities>\n") pkt("<oid> <ref>\n")... flush
// or, for a repository with no refs, the single placeholder line
//   pkt("<zero-id> capabilities^{}\0<capabilities>\n") flush.
// Lines named `.have` are objects the server already has (through
// alternates) but that no ref points at: useful to leave out of the pack,
// never a push target. The parse is strict: anything else, a missing final
// flush, or bytes after it is an error, because the old id sent in the
// command (T4) comes from here.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "wire/legs.hpp"
#include "courier/result.hpp"
#include "transport/capabilities.hpp"

namespace courier::transport {

inline constexpr std::string_view kReceivePackService = "git-receive-pack";
inline constexpr std::string_view kAdvertisementContentType = wire::leg_spec(wire::Leg::advertisement).response_type;

struct Advertisement {
  std::map<std::string, std::string, std::less<>> refs;  // ref name -> oid
  std::vector<std::string> haves;                        // `.have` ids, in order
  Capabilities capabilities;

  // The id the server says `ref` points at, or kZeroOid when it has no such ref.
  std::string_view oid_of(std::string_view ref) const;

  bool operator==(const Advertisement&) const = default;
};

// Smart HTTP's advertisement starts with the service header; over ssh
// (git-receive-pack run by ssh, T5) the ref lines come first.
enum class AdvertisementForm { http, ssh };

// Parses the whole response body (over ssh: the bytes up to and including
// the final flush). Errors: advertisement_malformed,
// unsupported_object_format (the server's object-format is not sha1),
// remote_error (the server sent an `ERR` packet), and the pkt-line errors
// (pkt_invalid_length, pkt_too_large, pkt_truncated).
Result<Advertisement> parse_advertisement(std::string_view body, AdvertisementForm form = AdvertisementForm::http);

// Ok when the GET response's Content-Type is the receive-pack
// advertisement (parameters after ';' tolerated). Errors: bad_content_type.
Result<void> check_advertisement_content_type(std::string_view content_type);

}  // namespace courier::transport
