// legs.cpp — lookups in the table of the two legs.
#include "wire/legs.hpp"

namespace courier::wire {

const LegSpec* find_leg(std::string_view name) {
  for (const auto& spec : kLegs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string leg_url(std::string_view remote, Leg leg) {
  const LegSpec& spec = leg_spec(leg);
  std::string url(remote);
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += spec.path_suffix;
  if (!spec.query.empty()) url += "?" + std::string(spec.query);
  return url;
}

}  // namespace courier::wire
