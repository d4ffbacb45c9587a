// fence_text.cpp — one fence raised in the verifier's state text.
#include "auth/fence_text.hpp"

#include <nlohmann/json.hpp>

#include "wire/json.hpp"

namespace courier::auth {

Result<FenceRaise> raise_fence_in(std::string_view state, const std::string& repository, std::int64_t fence,
                                  const std::string& what) {
  auto parsed = state.empty() ? Result<nlohmann::json>(nlohmann::json::object()) : wire::parse_json(state, what);
  if (!parsed) return fail(Errc::invalid_value, parsed.error().message);
  nlohmann::json& j = *parsed;
  if (!j.is_object()) return fail(Errc::invalid_value, what + " is not a JSON object");
  FenceRaise r;
  if (auto it = j.find(repository); it != j.end()) {
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX)) {
      return fail(Errc::invalid_value, what + ": the fence of a repository is not an integer");
    }
    r.before = it->get<std::int64_t>();
  }
  if (r.before && *r.before >= fence) return r;
  j[repository] = fence;
  // Repositories and fences came through the reader: strings are UTF-8,
  // so the strict dump cannot throw.
  r.text = j.dump() + "\n";
  return r;
}

}  // namespace courier::auth
