// json_fields.cpp — typed reads of a JSON object's fields (see the header).
#include "wire/json_fields.hpp"

namespace courier::wire {

using nlohmann::json;

JsonFields::JsonFields(const json& obj, std::string where, std::string& error, Mode mode)
    : obj_(obj), where_(std::move(where)), error_(error), mode_(mode) {
  if (!obj_.is_object()) problem(where_ + " is not a JSON object");
}

void JsonFields::wrong(const char* key, const char* what) {
  if (mode_ == Mode::strict) problem(where_ + "." + key + " is not " + what);
}

const json* JsonFields::field(const char* key, bool nullable) {
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    if (!nullable && mode_ == Mode::strict) problem(where_ + "." + key + " is missing");
    return nullptr;
  }
  return &*it;
}

// A field of one type: `is` says whether the value is one, `what` names the
// type in a problem.
template <typename T, typename Is>
std::optional<T> JsonFields::typed(const char* key, bool nullable, Is is, const char* what) {
  const json* v = field(key, nullable);
  if (!v) return std::nullopt;
  if (is(*v)) return v->get<T>();
  wrong(key, what);
  return std::nullopt;
}

std::optional<std::string> JsonFields::opt_str(const char* key, bool nullable) {
  return typed<std::string>(
      key, nullable, [](const json& v) { return v.is_string(); }, "a string");
}

std::optional<std::int64_t> JsonFields::opt_int(const char* key, bool nullable) {
  return typed<std::int64_t>(
      key, nullable, [](const json& v) { return v.is_number_integer(); }, "an integer");
}

std::optional<std::uint64_t> JsonFields::opt_count(const char* key, bool nullable) {
  const auto non_negative = [](const json& v) {
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  };
  return typed<std::uint64_t>(key, nullable, non_negative, "a non-negative integer");
}

std::optional<bool> JsonFields::opt_bool(const char* key, bool nullable) {
  return typed<bool>(
      key, nullable, [](const json& v) { return v.is_boolean(); }, "true or false");
}

const json* JsonFields::object(const char* key, bool nullable) {
  const json* v = field(key, nullable);
  if (!v || v->is_object()) return v;
  wrong(key, "an object");
  return nullptr;
}

std::vector<std::string> JsonFields::strings(const char* key) {
  std::vector<std::string> out;
  const json* v = field(key, false);
  if (!v) return out;
  if (!v->is_array()) {
    wrong(key, "an array");
    return out;
  }
  for (const auto& item : *v) {
    if (!item.is_string()) {
      if (mode_ == Mode::strict) problem(where_ + "." + key + " holds something other than a string");
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace courier::wire
