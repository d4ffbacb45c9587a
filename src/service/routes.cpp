// routes.cpp — the route table (see the header) and the matching of a
// request's method and path against it.
#include "service/routes.hpp"

#include "wire/grammar.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

constexpr std::string_view kId = "{id}";

// A pattern's or a path's segments after the leading '/'.
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path.front() != '/') return out;
  path.remove_prefix(1);
  for (;;) {
    const std::size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Whether `path` has the shape of `pattern` ("{id}": any one segment); the
// {id} segment's text in `id`.
bool shaped_like(std::string_view pattern, std::string_view path, std::string& id) {
  const auto want = segments(pattern);
  const auto have = segments(path);
  if (want.size() != have.size() || want.empty()) return false;
  std::string seen;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == kId) {
      seen = std::string(have[i]);
    } else if (want[i] != have[i]) {
      return false;
    }
  }
  id = std::move(seen);
  return true;
}

bool has_id(std::string_view pattern) { return pattern.find(kId) != std::string_view::npos; }

json statuses_json(const std::vector<RouteStatus>& statuses) {
  json out = json::object();
  for (const auto& s : statuses) {
    json codes = json::array();
    for (auto c : s.codes) codes.push_back(std::string(c));
    out[std::to_string(s.status)] = codes;
  }
  return out;
}

}  // namespace

// clang-format off
const std::vector<Route>& routes() {
  static const std::vector<Route> kRoutes = {
      {RouteName::submit, "POST", "/v1/deliveries",
       {{200, {}},
        {202, {}},
        {400, {"bad_json", "unknown_field", "bad_field", "missing_field", "unknown_credential", "bad_remote"}},
        {403, {"repo_outside_root", "credential_out_of_scope"}},
        {409, {"id_conflict"}},
        {413, {"body_too_large"}},
        {429, {"queue_full"}},
        {500, {"credential_failed"}},
        {503, {"draining"}}}},
      {RouteName::list, "GET", "/v1/deliveries",
       {{200, {}}, {400, {"bad_field", "bad_remote"}}}},
      {RouteName::show, "GET", "/v1/deliveries/{id}",
       {{200, {}}, {404, {"not_found"}}}},
      {RouteName::revoke, "DELETE", "/v1/deliveries/{id}",
       {{200, {}}, {404, {"not_found"}}}},
      {RouteName::events, "GET", "/v1/deliveries/{id}/events",
       {{200, {}}, {400, {"bad_field"}}, {404, {"not_found"}}}},
      {RouteName::health, "GET", "/healthz",
       {{200, {}}}},
      {RouteName::metrics, "GET", "/metrics",
       {{200, {}}}},
  };
  return kRoutes;
}

const std::vector<RouteStatus>& adapter_statuses() {
  static const std::vector<RouteStatus> kAdapter = {
      {401, {"unauthorized"}}, {403, {"peer_refused"}}, {503, {"over_capacity"}}};
  return kAdapter;
}

const std::vector<RouteStatus>& router_statuses() {
  static const std::vector<RouteStatus> kRouter = {{404, {"not_found"}}, {405, {"method_not_allowed"}}};
  return kRouter;
}
// clang-format on

RouteMatch match_route(std::string_view method, std::string_view path) {
  RouteMatch m;
  bool shaped = false;
  for (const Route& r : routes()) {
    std::string id;
    if (!shaped_like(r.pattern, path, id)) continue;
    // An {id} that is no delivery id names no delivery, whatever the method.
    if (has_id(r.pattern) && !wire::check_delivery_id(id)) {
      m.result = RouteMatch::Result::bad_id;
      m.id = std::move(id);
      return m;
    }
    shaped = true;
    m.allow += std::string(m.allow.empty() ? "" : ", ") + std::string(r.method);
    if (r.method == method) {
      m.result = RouteMatch::Result::found;
      m.route = &r;
      m.id = std::move(id);
      return m;
    }
  }
  m.result = shaped ? RouteMatch::Result::method_not_allowed : RouteMatch::Result::no_route;
  return m;
}

json routes_json() {
  json list = json::array();
  for (const Route& r : routes()) {
    list.push_back({{"method", r.method}, {"path", r.pattern}, {"statuses", statuses_json(r.statuses)}});
  }
  return {
      {"routes", list}, {"adapter", statuses_json(adapter_statuses())}, {"router", statuses_json(router_statuses())}};
}

}  // namespace courier::service
