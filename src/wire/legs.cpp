// legs.cpp — lookups in the table of the two legs.
#include "wire/legs.hpp"

#include "wire/url.hpp"

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

std::optional<std::string> leg_remote(std::string_view url) {
  auto parsed = parse_url(url);
  if (!parsed) return std::nullopt;
  for (const auto& spec : kLegs) {
    const std::string& path = parsed->path;
    const bool query_ok = spec.query.empty() ? !parsed->query : parsed->query == std::string(spec.query);
    if (!query_ok || path.size() <= spec.path_suffix.size()) continue;
    if (path.compare(path.size() - spec.path_suffix.size(), std::string::npos, spec.path_suffix) != 0) continue;
    return parsed->origin() + path.substr(0, path.size() - spec.path_suffix.size());
  }
  return std::nullopt;
}

}  // namespace courier::wire
