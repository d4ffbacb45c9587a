// json_fields.hpp — the one way the product reads the fields of a JSON
// object that parse_json (json.hpp) gave: every field checked for its type
// before it is used, never an exception (nlohmann/json's get() and value()
// throw on a field of another type).
//
// Strict (documents the product must understand: the outcome document): a
// missing or mistyped field is a problem, the first one kept and reported
// by the caller, the values read after it defaults. Lenient (what may come
// from an older or newer writer: journal rows, event lines, answers): a
// missing or mistyped field reads as its default, and only what the caller
// calls a problem is one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace courier::wire {

class JsonFields {
 public:
  enum class Mode { strict, lenient };

  // `where` names the object in problems ("outcome", "outcome.child");
  // `error` collects the first problem (shared by nested readers).
  JsonFields(const nlohmann::json& obj, std::string where, std::string& error, Mode mode = Mode::strict);

  // The field, or nullptr when absent or null (a problem in strict mode
  // unless nullable).
  const nlohmann::json* field(const char* key, bool nullable);
  std::optional<std::string> opt_str(const char* key, bool nullable = true);
  std::string str(const char* key) { return opt_str(key, false).value_or(""); }
  std::optional<std::int64_t> opt_int(const char* key, bool nullable = true);
  std::int64_t integer(const char* key) { return opt_int(key, false).value_or(0); }
  // A non-negative integer.
  std::optional<std::uint64_t> opt_count(const char* key, bool nullable = true);
  std::uint64_t count(const char* key) { return opt_count(key, false).value_or(0); }
  std::optional<bool> opt_bool(const char* key, bool nullable = true);
  bool boolean(const char* key) { return opt_bool(key, false).value_or(false); }
  // A nested object (nullptr: absent or null, and allowed).
  const nlohmann::json* object(const char* key, bool nullable);
  // An array of strings (empty: absent; a problem in strict mode).
  std::vector<std::string> strings(const char* key);

  // A named value: the word in `key` read by `parse` (a problem when it
  // spells nothing), else `fallback`.
  template <typename T, typename Parse>
  T named(const char* key, Parse parse, T fallback) {
    const std::string word = str(key);
    if (auto v = parse(word)) return *v;
    problem(where_ + "." + key + ": unknown name '" + word + "'");
    return fallback;
  }

  void problem(const std::string& message) {
    if (error_.empty()) error_ = message;
  }
  const std::string& where() const { return where_; }
  // For a nested object's reader: one first problem for the whole document.
  std::string& errors() { return error_; }
  Mode mode() const { return mode_; }

 private:
  void wrong(const char* key, const char* what);
  template <typename T, typename Is>
  std::optional<T> typed(const char* key, bool nullable, Is is, const char* what);

  const nlohmann::json& obj_;
  std::string where_;
  std::string& error_;
  Mode mode_;
};

}  // namespace courier::wire
