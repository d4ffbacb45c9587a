// json.cpp — the bounded JSON reader: a check that builds nothing, then the
// value.
#include "wire/json.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wire/text.hpp"

namespace courier::wire {

using nlohmann::json;

namespace {

// A key as it may appear in an error: escaped and cut (it comes from the
// text, which may be hostile and 1 MiB long).
constexpr std::size_t kMaxKeyShown = 64;

// The first pass, through nlohmann/json's SAX interface: it counts nesting
// and remembers the keys of each open object, and stops at the first
// problem, so nothing deeper than the cap is ever built or even held.
class Checker final : public nlohmann::json_sax<json> {
 public:
  std::optional<Error> problem;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    open_.emplace_back(std::in_place);  // an object: an empty set of keys
    return deep_enough();
  }
  bool key(string_t& k) override {
    if (open_.back()->insert(k).second) return true;
    problem = Error{Errc::duplicate_key, "has the key '" + printable(k, kMaxKeyShown) + "' twice in one object"};
    return false;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    open_.emplace_back(std::nullopt);
    return deep_enough();
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    problem = Error{Errc::malformed_json, "is not valid JSON"};
    return false;
  }

 private:
  bool deep_enough() {
    if (open_.size() <= kMaxJsonDepth) return true;
    problem =
        Error{Errc::json_too_deep, "nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    return false;
  }

  // One entry per open array (nullopt) or object (the keys seen so far).
  std::vector<std::optional<std::set<std::string>>> open_;
};

tl::unexpected<Error> refuse(std::string_view what, Error e) {
  e.message = std::string(what) + " " + e.message;
  return tl::unexpected<Error>(std::move(e));
}

}  // namespace

Result<json> parse_json(std::string_view text, std::string_view what) {
  if (text.size() > kMaxJsonBytes) {
    return refuse(what, Error{Errc::json_too_large, "is " + std::to_string(text.size()) + " bytes; at most " +
                                                        std::to_string(kMaxJsonBytes) + " are read"});
  }
  try {
    Checker check;
    if (!json::sax_parse(text.begin(), text.end(), &check) || check.problem) {
      return refuse(what, check.problem.value_or(Error{Errc::malformed_json, "is not valid JSON"}));
    }
    json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) return refuse(what, Error{Errc::malformed_json, "is not valid JSON"});
    return value;
  } catch (const std::exception& e) {  // allocation; nothing of nlohmann/json's escapes
    return refuse(what, Error{Errc::malformed_json, std::string("cannot be read: ") + e.what()});
  }
}

std::size_t json_depth(const json& value) {
  if (!value.is_structured()) return 0;
  std::size_t deepest = 0;
  for (const auto& child : value) deepest = std::max(deepest, json_depth(child));
  return deepest + 1;
}

}  // namespace courier::wire
