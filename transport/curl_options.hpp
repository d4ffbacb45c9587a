// curl_options.hpp — libcurl options and infos: set, read and converted
// to Error in one place. A leg's options are a table of rows (option,
// value of the type libcurl reads for it), set in order; the first refusal
// ends the leg before a byte is sent, naming the option.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "courier/result.hpp"

namespace courier::transport {

// The value of one libcurl option, of the type libcurl reads for it.
struct OffsetValue {
  curl_off_t value;
};
using DataCallback = std::size_t (*)(char*, std::size_t, std::size_t, void*);  // read and write callbacks
using OptionValue =
    std::variant<long, OffsetValue, const char*, void*, curl_slist*, DataCallback, curl_xferinfo_callback>;

// One row of a leg's option table.
struct CurlOption {
  CURLoption id;
  OptionValue value;
};
using OptionTable = std::vector<CurlOption>;

// A string option's "unset" (libcurl's own default, or nothing).
inline constexpr const char* kNoString = nullptr;

// "CURLOPT_<name>" as libcurl knows it, or the number of an option this
// libcurl does not know.
std::string option_name(CURLoption id);
// Sets one option. Errors: curl_refused, naming the option: an option this
// libcurl does not know, a value it refuses, or a value of the wrong type.
Result<void> set_option(CURL* c, const CurlOption& o);
// Sets the table in order; the first refusal ends it. Errors: as set_option.
Result<void> set_options(CURL* c, const OptionTable& table);

// curl_easy_getinfo, checked. T is the type libcurl writes for `info`.
// Errors: curl_refused, naming the info.
template <class T>
Result<T> get_info(CURL* c, CURLINFO info, const char* name) {
  T value{};
  const CURLcode rc = curl_easy_getinfo(c, info, &value);
  if (rc != CURLE_OK)
    return fail(Errc::curl_refused, std::string("libcurl refused ") + name + " (" + curl_easy_strerror(rc) + ")");
  return value;
}

inline Result<long> response_code(CURL* c) {
  return get_info<long>(c, CURLINFO_RESPONSE_CODE, "CURLINFO_RESPONSE_CODE");
}

}  // namespace courier::transport
