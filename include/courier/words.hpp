// words.hpp — (public) how an enum is spelled: a table of rows, each value
// with its one word, read in both directions by the same two functions, so
// that a word is written in one place and a new value is one new row.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace courier {

template <typename E>
struct WordRow {
  E value;
  std::string_view word;  // a string literal: its data() is NUL-terminated
};

// The word of `value` ("unknown": not in the table, which a test of each
// table rules out).
template <typename E, std::size_t N>
constexpr std::string_view word_of(const WordRow<E> (&rows)[N], E value) {
  for (const auto& r : rows) {
    if (r.value == value) return r.word;
  }
  return "unknown";
}

// The value a word spells (nullopt: no such word).
template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const WordRow<E> (&rows)[N], std::string_view word) {
  for (const auto& r : rows) {
    if (r.word == word) return r.value;
  }
  return std::nullopt;
}

// The word of a value of an enum declared with COURIER_WORD_ENUM, and the
// value of a word (word_rows() is found by argument-dependent lookup).
template <typename E>
constexpr std::string_view enum_word(E value) {
  return word_of(word_rows(value), value);
}
template <typename E>
constexpr std::optional<E> enum_from_word(std::string_view word) {
  return value_of(word_rows(E{}), word);
}

}  // namespace courier

// Declares `enum class E` from an X-macro list whose first column is each
// value's name, which is also its word; then the word table
// (E_words::kRows) and word_rows(E), for enum_word() and enum_from_word<E>().
// A new value is one line of the list, and it cannot be missing its word.
#define COURIER_WORD_ENUMERATOR(n, ...) n,
#define COURIER_WORD_ROW_IN_SCOPE(n, ...) ::courier::WordRow<WordEnum>{WordEnum::n, #n},
#define COURIER_WORD_ENUM(E, LIST)                                                      \
  enum class E { LIST(COURIER_WORD_ENUMERATOR) };                                       \
  namespace E##_words {                                                                 \
    using WordEnum = E;                                                                 \
    inline constexpr ::courier::WordRow<E> kRows[] = {LIST(COURIER_WORD_ROW_IN_SCOPE)}; \
  }                                                                                     \
  constexpr const auto& word_rows(E) { return E##_words::kRows; }                       \
  static_assert(sizeof(E##_words::kRows) > 0, #E " has words")
