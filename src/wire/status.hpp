// status.hpp — what the child says became of its push: one enum and its
// words in result frames, spelled here only.
#pragma once

#include <optional>
#include <string_view>

#include "courier/words.hpp"

namespace courier::wire {

enum class DeliveryStatus { delivered, up_to_date, rejected, auth_failed, transport_failed, failed };

inline constexpr WordRow<DeliveryStatus> kStatusWords[] = {{DeliveryStatus::delivered, "delivered"},
                                                           {DeliveryStatus::up_to_date, "up_to_date"},
                                                           {DeliveryStatus::rejected, "rejected"},
                                                           {DeliveryStatus::auth_failed, "auth_failed"},
                                                           {DeliveryStatus::transport_failed, "transport_failed"},
                                                           {DeliveryStatus::failed, "failed"}};

constexpr std::string_view status_word(DeliveryStatus s) { return word_of(kStatusWords, s); }

// nullopt: not a status word.
constexpr std::optional<DeliveryStatus> status_from_word(std::string_view word) { return value_of(kStatusWords, word); }

// The remote holds the object at the ref (the push landed, or it already did).
constexpr bool status_succeeded(DeliveryStatus s) {
  return s == DeliveryStatus::delivered || s == DeliveryStatus::up_to_date;
}

}  // namespace courier::wire
