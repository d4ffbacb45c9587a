// api.hpp — the service's HTTP API (/v1) as routing and JSON, independent
// of the HTTP library: a request in, a response out, so that every route
// and every refusal can be tested without a socket. The HTTP adapter
// (http_server_mhd.*) only moves bytes and checks who is calling.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "service/credential_scope.hpp"
#include "service/deliveries.hpp"
#include "service/metrics.hpp"
#include "service/submit_body.hpp"

namespace courier::service {

// The largest request body accepted (413 body_too_large beyond it).
inline constexpr std::size_t kMaxBody = 64 * 1024;

struct ApiRequest {
  std::string method;
  std::string path;   // without the query
  std::string query;  // after '?', undecoded ("" when none)
  std::string body;
  bool body_too_large = false;  // the adapter stopped reading at kMaxBody
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // For an event stream: the body comes from here, as it grows.
  std::unique_ptr<EventStream> stream;
};

class Api {
 public:
  Api(ApiConfig config, Deliveries& deliveries, Metrics& metrics);
  // Routes and answers; counts the answer's status in the metrics.
  ApiResponse handle(const ApiRequest& r);
  // An error document with its status, counted (the adapter's own refusals).
  ApiResponse error(int status, const std::string& code, const std::string& field, const std::string& message);

 private:
  ApiResponse route(const ApiRequest& r);
  ApiResponse post_delivery(const ApiRequest& r);
  ApiResponse get_delivery(const std::string& id);
  ApiResponse get_events(const std::string& id, const std::string& query);
  ApiResponse delete_delivery(const std::string& id);
  ApiResponse list(const std::string& query);
  ApiResponse health();
  ApiResponse metrics_text();

  ApiConfig config_;
  Deliveries& deliveries_;
  Metrics& metrics_;
};

// A query string's parameters, percent-decoded ('+' as a space).
std::map<std::string, std::string> parse_query(const std::string& query);

}  // namespace courier::service
