// curl_options.cpp — libcurl options set row by row, each value checked
// against the type libcurl reads for it.
#include "transport/curl_options.hpp"

#include <type_traits>

namespace courier::transport {

namespace {

// Whether `v` is of the type libcurl reads for the option: curl_easy_setopt
// takes its value through varargs, so a wrong type would be read as garbage.
bool value_fits(const curl_easyoption& o, const OptionValue& v) {
  switch (o.type) {
    case CURLOT_LONG:
    case CURLOT_VALUES:
      return std::holds_alternative<long>(v);
    case CURLOT_OFF_T:
      return std::holds_alternative<OffsetValue>(v);
    case CURLOT_STRING:
      return std::holds_alternative<const char*>(v);
    case CURLOT_OBJECT:
    case CURLOT_CBPTR:
      return std::holds_alternative<void*>(v);
    case CURLOT_SLIST:
      return std::holds_alternative<curl_slist*>(v);
    case CURLOT_FUNCTION:
      return std::holds_alternative<DataCallback>(v) || std::holds_alternative<curl_xferinfo_callback>(v);
    case CURLOT_BLOB:
      return false;
  }
  return false;
}

}  // namespace

// "CURLOPT_<name>" as libcurl knows it, or the number of an option this
// libcurl does not know.
std::string option_name(CURLoption id) {
  if (const curl_easyoption* o = curl_easy_option_by_id(id)) return std::string("CURLOPT_") + o->name;
  return "option " + std::to_string(static_cast<long>(id)) + " (unknown to this libcurl)";
}

// Sets one option. Errors: curl_refused, naming the option: an option this
// libcurl does not know, a value it refuses, or a value of the wrong type.
Result<void> set_option(CURL* c, const CurlOption& o) {
  const curl_easyoption* known = curl_easy_option_by_id(o.id);
  if (known && !value_fits(*known, o.value)) {
    return fail(Errc::curl_refused, "the leg gives " + option_name(o.id) + " a value of the wrong type");
  }
  const CURLcode rc = std::visit(
      [&](auto v) {
        if constexpr (std::is_same_v<decltype(v), OffsetValue>) {
          return curl_easy_setopt(c, o.id, v.value);
        } else {
          return curl_easy_setopt(c, o.id, v);
        }
      },
      o.value);
  if (rc != CURLE_OK) {
    return fail(Errc::curl_refused,
                "libcurl refused " + option_name(o.id) + " (" + curl_easy_strerror(rc) + "); the leg was not started");
  }
  return {};
}

// Sets the table in order; the first refusal ends it. Errors: as set_option.
Result<void> set_options(CURL* c, const OptionTable& table) {
  for (const CurlOption& o : table) {
    if (auto ok = set_option(c, o); !ok) return ok;
  }
  return {};
}

}  // namespace courier::transport
