// routes.hpp — the service's routes as one table: each route's method, path
// pattern, and the statuses it answers with the error codes of each. The
// router (Api::route) finds its handler in this table, so what the service
// serves and what it says it serves are the same rows; `git-courier
// __service-routes` prints the table as JSON, and the API document
// (docs/api/openapi.json) is checked against it (scripts/check-api). A new
// route, status or error code is a row or a word here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace courier::service {

// The handler a route is answered by (Api's members).
enum class RouteName { health, metrics, submit, list, show, events, revoke };

// One status a route may answer with, and the error codes of its error
// document (none for a success).
struct RouteStatus {
  int status = 200;
  std::vector<std::string_view> codes;
};

struct Route {
  RouteName name;
  std::string_view method;
  // Segments separated by '/'; "{id}" stands for one delivery id
  // (wire::check_delivery_id).
  std::string_view pattern;
  std::vector<RouteStatus> statuses;
};

// Every route, in the order the API document lists them.
const std::vector<Route>& routes();

// What the HTTP adapter answers on any path before a request is routed:
// 401 unauthorized (TCP without the token), 403 peer_refused (Unix socket),
// 503 over_capacity (past the connection cap).
const std::vector<RouteStatus>& adapter_statuses();

// What the router answers when no route takes a request: 404 not_found (no
// pattern matches the path, or its {id} is no delivery id), 405
// method_not_allowed (a pattern matches, the method does not).
const std::vector<RouteStatus>& router_statuses();

// Where a request goes.
struct RouteMatch {
  enum class Result { found, no_route, bad_id, method_not_allowed };
  Result result = Result::no_route;
  const Route* route = nullptr;  // found
  std::string id;                // the {id} segment, when the pattern has one
  std::string allow;             // method_not_allowed: the path's methods ("GET, DELETE")
};
RouteMatch match_route(std::string_view method, std::string_view path);

// The table as one JSON document: {"routes": [{"method", "path",
// "statuses": {"200": [], "404": ["not_found"]}}], "adapter": {...},
// "router": {...}}.
nlohmann::json routes_json();

}  // namespace courier::service
