// api_router.hpp — the service's API router (service::Api) over a real
// registry and metrics, with no HTTP server: a test hands it requests
// directly. The repository root is a temporary directory of its own.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "service/api.hpp"
#include "support.hpp"

namespace courier::test {

struct ApiRouter {
  test::TempDir root;
  service::Metrics metrics;
  service::Deliveries deliveries{service::RegistryOptions{}, nullptr, metrics};
  service::Api api;

  explicit ApiRouter(service::ServiceCredentials credentials = {})
      : api(config(root.path(), std::move(credentials)), deliveries, metrics) {}

  static service::ApiConfig config(const std::string& root, service::ServiceCredentials credentials) {
    service::ApiConfig c;
    c.repo_root = std::filesystem::canonical(root).string();
    c.credentials = std::move(credentials);
    return c;
  }

  service::ApiResponse call(const std::string& method, const std::string& path, const std::string& body = {},
                            const std::string& query = {}) {
    service::ApiRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.query = query;
    return api.handle(r);
  }
  service::ApiResponse post(const nlohmann::json& body) { return call("POST", "/v1/deliveries", body.dump()); }
};

inline nlohmann::json body_of(const service::ApiResponse& r) { return nlohmann::json::parse(r.body, nullptr, false); }

}  // namespace courier::test
