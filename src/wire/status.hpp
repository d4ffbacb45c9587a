// status.hpp — what the child says became of its push: one enum and its
// words in result frames, spelled here only.
#pragma once

#include <optional>
#include <string_view>

namespace courier::wire {

enum class DeliveryStatus { delivered, up_to_date, rejected, auth_failed, transport_failed, failed };

inline constexpr DeliveryStatus kAllStatuses[] = {DeliveryStatus::delivered,        DeliveryStatus::up_to_date,
                                                  DeliveryStatus::rejected,         DeliveryStatus::auth_failed,
                                                  DeliveryStatus::transport_failed, DeliveryStatus::failed};

constexpr std::string_view status_word(DeliveryStatus s) {
  switch (s) {
    case DeliveryStatus::delivered:
      return "delivered";
    case DeliveryStatus::up_to_date:
      return "up_to_date";
    case DeliveryStatus::rejected:
      return "rejected";
    case DeliveryStatus::auth_failed:
      return "auth_failed";
    case DeliveryStatus::transport_failed:
      return "transport_failed";
    case DeliveryStatus::failed:
      return "failed";
  }
  return "failed";
}

// nullopt: not a status word.
constexpr std::optional<DeliveryStatus> status_from_word(std::string_view word) {
  for (auto s : kAllStatuses) {
    if (status_word(s) == word) return s;
  }
  return std::nullopt;
}

// The remote holds the object at the ref (the push landed, or it already did).
constexpr bool status_succeeded(DeliveryStatus s) {
  return s == DeliveryStatus::delivered || s == DeliveryStatus::up_to_date;
}

}  // namespace courier::wire
