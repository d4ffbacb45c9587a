// service-api.cpp — the service's API as a pure router (no socket, no
// executor): routes, every refusal the adapter-free layer makes with its
// status, code and field, the query grammar, the caller checks and the
// service's options. The same API behind the real socket is
// tests/integration/service.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "api_router.hpp"
#include "service/api.hpp"
#include "service/event_numbering.hpp"
#include "service/http_server_mhd.hpp"
#include "service/resume.hpp"
#include "service/routes.hpp"
#include "service/service_options.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_service_api {

using namespace courier;
using nlohmann::json;

namespace {

// The deploy credential, scoped to one host, is what the body tests name.
struct Router : test::ApiRouter {
  Router() : ApiRouter({{"deploy", {"credential", {"https://h/"}}}}) {}
};
using test::body_of;

}  // namespace

TEST_CASE("service API: routes answer 404 and 405 with an error document; healthz and metrics answer") {
  Router r;
  auto missing = r.call("GET", "/v2/deliveries");
  CHECK(missing.status == 404);
  CHECK(body_of(missing)["error"]["code"] == "not_found");
  CHECK(r.call("PUT", "/v1/deliveries").status == 405);
  CHECK(r.call("POST", "/v1/deliveries/abc").status == 405);
  CHECK(r.call("GET", "/v1/deliveries/abc").status == 404);
  CHECK(r.call("GET", "/v1/deliveries/bad id").status == 404);
  auto health = r.call("GET", "/healthz");
  CHECK(health.status == 200);
  CHECK(body_of(health)["status"] == "ok");
  auto metrics = r.call("GET", "/metrics");
  CHECK(metrics.content_type.find("version=0.0.4") != std::string::npos);
  CHECK(metrics.body.find("git_courier_api_requests_total{code=\"404\"} 3") != std::string::npos);
  CHECK(metrics.body.find("git_courier_queue_depth 0") != std::string::npos);
  CHECK(r.call("GET", "/v1/deliveries", {}, "state=sleeping").status == 400);
  CHECK(r.call("GET", "/v1/deliveries", {}, "limit=0").status == 400);
  CHECK(body_of(r.call("GET", "/v1/deliveries", {}, "limit=5"))["deliveries"].empty());
}

TEST_CASE(
    "X-API1: the router dispatches by its route table: each route answers a status its row lists, another method on "
    "its path is 405 with Allow, another path 404") {
  Router r;
  for (const auto& route : service::routes()) {
    std::string path(route.pattern);
    if (const auto at = path.find("{id}"); at != std::string::npos) path.replace(at, 4, "no-such");
    const auto a = r.call(std::string(route.method), path, route.method == "POST" ? "{}" : "");
    const bool listed = std::any_of(route.statuses.begin(), route.statuses.end(),
                                    [&](const service::RouteStatus& s) { return s.status == a.status; });
    CHECK_MESSAGE(
        listed, route.method << " " << route.pattern << " answered " << a.status << ", a status its row does not list");
  }
  auto put = r.call("PUT", "/v1/deliveries/abc");
  CHECK(put.status == 405);
  CHECK(body_of(put)["error"]["code"] == "method_not_allowed");
  const auto allow =
      std::find_if(put.headers.begin(), put.headers.end(), [](const auto& h) { return h.first == "Allow"; });
  REQUIRE(allow != put.headers.end());
  CHECK(allow->second == "GET, DELETE");
  CHECK(r.call("POST", "/healthz").status == 405);
  CHECK(r.call("GET", "/v1/deliveries/abc/events/more").status == 404);
  CHECK(r.call("DELETE", "/v1/deliveries/bad id/events").status == 404);
  const auto revoke = service::match_route("DELETE", "/v1/deliveries/abc");
  REQUIRE(revoke.route != nullptr);
  CHECK(revoke.route->name == service::RouteName::revoke);
  CHECK(revoke.id == "abc");
  // What `git-courier __service-routes` prints: every row, and the
  // adapter's and the router's answers.
  const auto table = service::routes_json();
  CHECK(table["routes"].size() == service::routes().size());
  CHECK(table["adapter"].contains("401"));
  CHECK(table["router"]["405"] == json::array({"method_not_allowed"}));
}

TEST_CASE("X-SVC4: a refused POST names its code and field before anything is submitted") {
  Router r;
  struct Case {
    std::string body;
    int status;
    std::string code;
    json field;
  };
  const std::string repo = r.root.path();
  const std::vector<Case> cases = {
      {"not json", 400, "bad_json", nullptr},
      {"[1, 2]", 400, "bad_json", nullptr},
      {R"({"colour": "blue"})", 400, "unknown_field", "colour"},
      {R"({"remote": "https://h/r.git"})", 400, "missing_field", "repo"},
      {R"({"repo": 7})", 400, "bad_field", "repo"},
      {R"({"repo": "/"})", 403, "repo_outside_root", "repo"},
      {R"({"repo": ")" + repo + R"(", "remote": "ftp://h/r.git", "ref": "refs/heads/main", "rev": "HEAD"})", 400,
       "bad_remote", "remote"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://u@h/r.git", "ref": "refs/heads/main", "rev": "HEAD"})", 400,
       "bad_remote", "remote"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", "ref": "HEAD", "rev": "HEAD"})", 400, "bad_field",
       "ref"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "deadline": true})", 400,
       "bad_field", "deadline"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "credential": "x"})", 400,
       "unknown_credential", "credential"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h2/r.git", "ref": "refs/heads/main", "credential": "deploy"})",
       403, "credential_out_of_scope", "credential"},
      {R"({"repo": ")" + repo +
           R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "update": {"expect_old": "1"}})",
       400, "bad_field", "update"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "remote_progress": 1})",
       400, "bad_field", "remote_progress"},
      {R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", "ref": "refs/heads/main"})", 400, "missing_field",
       "oid"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    auto resp = r.call("POST", "/v1/deliveries", c.body);
    CHECK(resp.status == c.status);
    json b = body_of(resp);
    CHECK(b["error"]["code"] == c.code);
    CHECK(b["error"]["field"] == c.field);
  }
  service::ApiRequest big;
  big.method = "POST";
  big.path = "/v1/deliveries";
  big.body_too_large = true;
  CHECK(r.api.handle(big).status == 413);
  r.deliveries.stop_accepting();
  auto draining = r.call("POST", "/v1/deliveries", "{}");
  CHECK(draining.status == 503);
  CHECK(body_of(draining)["error"]["code"] == "draining");
  CHECK(body_of(r.call("GET", "/healthz"))["status"] == "draining");
}

// Whether a refused answer lists `field` with `code` among its errors.
bool lists(const json& b, const std::string& field, const std::string& code) {
  for (const auto& e : b["errors"]) {
    if (e["field"] == field && e["code"] == code) return true;
  }
  return false;
}

TEST_CASE("X-CLI6 X-SVC4: a set of updates is refused before anything is submitted, each refusal naming its element") {
  Router r;
  const std::string repo = r.root.path();
  const std::string head = R"({"repo": ")" + repo + R"(", "remote": "https://h/r.git", )";
  const std::string a = "1111111111111111111111111111111111111111";
  const std::string zero(40, '0');
  struct Case {
    std::string rest;
    std::string field;
    std::string code;
  };
  const std::vector<Case> cases = {
      {R"("updates": []})", "updates", "bad_field"},
      {R"("updates": [7]})", "updates[0]", "bad_field"},
      {R"("updates": [{"ref": "refs/heads/a", "oid": ")" + a + R"(", "colour": 1}]})", "updates[0].colour",
       "unknown_field"},
      {R"("updates": [{"ref": "refs/heads/a"}]})", "updates[0].oid", "missing_field"},
      {R"("updates": [{"ref": "refs/heads/a", "oid": ")" + a + R"(", "update": "sideways"}]})", "updates[0].update",
       "bad_field"},
      {R"("updates": [{"ref": "refs/heads/a", "oid": ")" + a + R"("}, {"ref": "refs/heads/a", "oid": ")" + zero +
           R"("}]})",
       "updates[1].ref", "bad_field"},
      {R"("updates": [{"ref": "refs/heads/a", "oid": ")" + a + R"("}, {"ref": "HEAD", "oid": ")" + a + R"("}]})",
       "updates[1].ref", "bad_field"},
      {R"("ref": "refs/heads/b", "updates": [{"ref": "refs/heads/a", "oid": ")" + a + R"("}]})", "updates",
       "bad_field"},
      {R"("ref": "refs/heads/a", "oid": ")" + a + R"(", "atomic": "sometimes"})", "atomic", "bad_field"},
      {R"("ref": "refs/heads/a", "oid": ")" + a + R"(", "push_options": [1]})", "push_options", "bad_field"},
      {R"("ref": "refs/heads/a", "oid": ")" + a + R"(", "push_options": ["ok", "two\nlines"]})", "push_options[1]",
       "bad_field"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.rest);
    auto resp = r.call("POST", "/v1/deliveries", head + c.rest);
    CHECK(resp.status == 400);
    const json b = body_of(resp);
    CHECK_MESSAGE(lists(b, c.field, c.code), b.dump());
  }
  // 101 updates: more than one delivery takes.
  json many = {{"repo", repo}, {"remote", "https://h/r.git"}, {"updates", json::array()}};
  for (int i = 0; i <= 100; ++i) many["updates"].push_back({{"ref", "refs/heads/b" + std::to_string(i)}, {"oid", a}});
  CHECK(lists(body_of(r.post(many)), "updates", "bad_field"));
  CHECK(r.deliveries.list("", "", 10).empty());
}

TEST_CASE("J4 X-CLI6: the service's journal note keeps the whole set, and a resumed delivery is the same request") {
  test::TempDir repo;
  service::ServiceNote note;
  note.credential = "deploy";
  note.updates = {RefUpdate{"refs/heads/main", std::string(40, 'a'), UpdateMode::force, std::nullopt},
                  RefUpdate{"refs/tags/v1", std::string(40, 'b'), UpdateMode::fast_forward, std::nullopt},
                  RefUpdate{"refs/heads/old", std::string(40, '0'), UpdateMode::expect_old, std::string(40, 'c')}};
  note.atomic = Atomicity::non_atomic;
  note.push_options = {"ci.skip", "x=y"};
  const auto back = service::note_from(service::note_text(note));
  REQUIRE(back.has_value());
  CHECK(back->updates == note.updates);
  CHECK(back->atomic == Atomicity::non_atomic);
  CHECK(back->push_options == note.push_options);
  // A note naming an update rule this program does not know is not guessed.
  CHECK_FALSE(service::note_from(R"({"service":true,"updates":[{"ref":"refs/heads/a","oid":"x","update":"sideways"}]})")
                  .has_value());
  journal::Submission s;
  s.id = "set-1";
  s.repo = repo.path();
  s.remote = "https://h/r.git";
  s.ref = "refs/heads/main";  // the journal's row names the first ref only
  s.oid = std::string(40, 'a');
  s.deadline_unix_ms = 1;
  service::ServiceCredentials credentials = {{"deploy", {"credential", {"https://h/"}}}};
  auto in = service::resubmission(service::LeftBehind{s, *back}, credentials, false);
  REQUIRE_MESSAGE(in.has_value(), (in ? "" : in.error().message));
  CHECK(in->checked.updates() == note.updates);
  CHECK_FALSE(in->checked.atomic());
  CHECK(in->checked.request().push_options == note.push_options);
}

TEST_CASE("P1 service API: a body with a key twice in one object is refused 400 bad_json, never judged on one value") {
  // The read that would otherwise happen: last wins, so the body below was
  // judged on /etc (403 repo_outside_root) while its sender meant the root.
  Router r;
  const std::string repo = r.root.path();
  for (const std::string& body :
       {R"({"repo": ")" + repo + R"(", "repo": "/etc", "remote": "https://h/r.git", "ref": "refs/heads/main"})",
        R"({"repo": ")" + repo +
            R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "update": )"
            R"({"expect_old": ")" +
            std::string(40, '0') + R"(", "expect_old": ")" + std::string(40, 'a') + R"("}})"}) {
    CAPTURE(body);
    auto resp = r.call("POST", "/v1/deliveries", body);
    CHECK(resp.status == 400);
    json b = body_of(resp);
    CHECK(b["error"]["code"] == "bad_json");
    CHECK_MESSAGE(b["error"]["message"].get<std::string>().find("twice in one object") != std::string::npos,
                  b["error"]["message"]);
  }
  // Nested past the cap (the body's 64 KiB allow 32,000 levels): refused
  // whole, and the service answers its next request.
  const std::string deep =
      R"({"repo": ")" + repo + R"(", "x": )" + std::string(30'000, '[') + std::string(30'000, ']') + "}";
  auto resp = r.call("POST", "/v1/deliveries", deep);
  CHECK(resp.status == 400);
  CHECK(body_of(resp)["error"]["code"] == "bad_json");
  CHECK(r.call("GET", "/healthz").status == 200);
}

TEST_CASE(
    "D1 service API: a deadline of 18446744073709551615 s is refused as longer than 24 h, a negative one as such") {
  Router r;
  const std::string head =
      R"({"repo": ")" + r.root.path() + R"(", "remote": "https://h/r.git", "ref": "refs/heads/main", "deadline": )";
  auto huge = r.call("POST", "/v1/deliveries", head + "18446744073709551615}");
  CHECK(huge.status == 400);
  CHECK(body_of(huge)["error"]["field"] == "deadline");
  CHECK_MESSAGE(body_of(huge)["error"]["message"] == "\"deadline\" is longer than 24 h", huge.body);
  auto over = r.call("POST", "/v1/deliveries", head + "86401}");
  CHECK(body_of(over)["error"]["message"] == "\"deadline\" is longer than 24 h");
  auto negative = r.call("POST", "/v1/deliveries", head + "-1}");
  CHECK(negative.status == 400);
  CHECK_MESSAGE(body_of(negative)["error"]["message"] == "\"deadline\" must be a positive duration", negative.body);
}

TEST_CASE("service API: query strings are percent-decoded, '+' is a space, the last of a repeated key wins") {
  auto q = service::parse_query("state=finished&remote=https%3A%2F%2Fh%2Fr.git&x=a+b&state=queued&flag");
  CHECK(q["state"] == "queued");
  CHECK(q["remote"] == "https://h/r.git");
  CHECK(q["x"] == "a b");
  CHECK(q.count("flag") == 1);
  CHECK(service::parse_query("").empty());
}

TEST_CASE("X-SVC1: the peer rule lets in an allowed uid, primary group or supplementary group, and no one else") {
  CHECK(service::peer_allowed(1000, 1000, {}, {1000}, {}));
  CHECK(service::peer_allowed(1001, 42, {}, {1000}, {42}));
  CHECK(service::peer_allowed(1001, 1001, {7, 42}, {1000}, {42}));
  CHECK_FALSE(service::peer_allowed(1001, 1001, {7}, {1000}, {42}));
  CHECK_FALSE(service::peer_allowed(0, 0, {}, {1000}, {}));
}

TEST_CASE("X-SVC2: the bearer token matches exactly, never a prefix, an extension or an empty expectation") {
  CHECK(service::token_matches("s3cret-token-0123", "s3cret-token-0123"));
  CHECK_FALSE(service::token_matches("s3cret-token-012", "s3cret-token-0123"));
  CHECK_FALSE(service::token_matches("s3cret-token-01234", "s3cret-token-0123"));
  CHECK_FALSE(service::token_matches("s3cret-token-0124", "s3cret-token-0123"));
  CHECK_FALSE(service::token_matches("", ""));
}

TEST_CASE("service: serve's options: defaults, repeatable flags, --config with the command line winning, refusals") {
  auto none = service::parse_service_options({});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message.find("--repo-root") != std::string::npos);
  auto o = service::parse_service_options({"--repo-root", "/srv", "--credential", "a=credential", "--credential",
                                           "b=key:/k.pem", "--credential-scope", "b=https://h/x", "--credential-scope",
                                           "b=https://h/y", "--allow-uid", "7", "--allow-gid", "8", "--workers=2"});
  REQUIRE(o.has_value());
  CHECK(o->credentials.size() == 2);
  CHECK(o->credentials["b"] == "key:/k.pem");
  CHECK(o->credential_scopes["b"] == std::vector<std::string>{"https://h/x", "https://h/y"});
  CHECK(o->allow_uids == std::vector<std::uint32_t>{7});
  CHECK(o->allow_gids == std::vector<std::uint32_t>{8});
  CHECK(o->workers == 2);
  CHECK(o->max_queued == 256);
  CHECK(o->drain_timeout == std::chrono::seconds(30));
  test::TempDir dir;
  const std::string file = dir.path() + "/serve.json";
  test::write_file(file, R"({"repo-root": "/from-file", "workers": 9, "credential": ["c=credential"],
                             "credential-scope": ["c=https://h/"], "drain-timeout": "5s", "allow-http-loopback": true})");
  auto c = service::parse_service_options({"--config", file, "--workers", "3"});
  REQUIRE(c.has_value());
  CHECK(c->repo_root == "/from-file");
  CHECK(c->workers == 3);
  CHECK(c->credentials.count("c") == 1);
  CHECK(c->credential_scopes["c"] == std::vector<std::string>{"https://h/"});
  CHECK(c->drain_timeout == std::chrono::seconds(5));
  CHECK(c->allow_http_loopback);
  for (std::vector<std::string> bad : {std::vector<std::string>{"--repo-root", "/r", "--listen", "127.0.0.1:80"},
                                       {"--repo-root", "/r", "--listen", "0.0.0.0:80", "--api-token-file", "/t"},
                                       {"--repo-root", "/r", "--workers", "0"},
                                       {"--repo-root", "/r", "--credential", "nameless"},
                                       {"--repo-root", "/r", "--credential-scope", "https://h/"},
                                       {"--repo-root", "/r", "--drain-timeout", "forever"},
                                       {"--repo-root", "/r", "--bogus"}}) {
    CAPTURE(bad.back());
    CHECK_FALSE(service::parse_service_options(bad).has_value());
  }
  test::write_file(file, R"({"repo-root": "/r", "colour": "blue"})");
  CHECK_FALSE(service::parse_service_options({"--config", file}).has_value());
}

TEST_CASE("Q3: a cursor is SEQ or GEN:SEQ; another generation's starts the stream again; anything else is refused") {
  auto plain = service::parse_cursor("3000002");
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->gen.has_value());
  CHECK(service::resume_after(*plain, "5f0c") == 3000002);
  auto same = service::parse_cursor("5f0c:3000002");
  REQUIRE(same.has_value());
  CHECK(service::resume_after(*same, "5f0c") == 3000002);
  CHECK_MESSAGE(service::resume_after(*same, "77aa") == 0, "Q3: a stale generation's cursor was taken as this one's");
  CHECK(service::parse_cursor("9007199254740992").has_value());
  for (const char* bad : {"", "x", "-1", "1.5", "9007199254740993", ":1", "5f0c:", "5g0c:1", "a:b:1",
                          "00000000000000000000000000000000f:1"}) {
    CAPTURE(bad);
    CHECK_FALSE(service::parse_cursor(bad).has_value());
  }
}

TEST_CASE("Q3: the journal's lines are its latest attempt's transitions, each numbered by its entry's ordinal") {
  journal::Record r;
  r.submission.attempt = 2;
  r.submission.remote = "https://h/r.git";
  r.submission.ref = "refs/heads/main";
  const auto entry = [](journal::Step step, int attempt, std::string detail = "{}") {
    return journal::Entry{step, attempt, 0, std::move(detail)};
  };
  r.entries = {entry(journal::Step::submitted, 1),
               entry(journal::Step::claimed, 1),
               entry(journal::Step::dispatched, 1, R"({"child_pid":"41"})"),
               entry(journal::Step::submitted, 2),
               entry(journal::Step::claimed, 2),
               entry(journal::Step::dispatched, 2, R"({"child_pid":"42"})"),
               entry(journal::Step::revoke_requested, 2, R"({"cause":"caller"})")};
  const auto lines = service::journal_lines(r, "5f0c");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].seq == 4 * service::kSeqStep);
  CHECK(lines[1].seq == 6 * service::kSeqStep);
  CHECK(lines[2].seq == 7 * service::kSeqStep);
  CHECK(json::parse(lines[2].text)["event"] == "revoke_requested");
  CHECK(json::parse(lines[2].text)["cause"] == "caller");
  CHECK(json::parse(lines[0].text)["gen"] == "5f0c");
  CHECK(service::entry_ordinal(r, journal::Step::dispatched) == 6u);
  CHECK_FALSE(service::entry_ordinal(r, journal::Step::finished).has_value());
}

}  // namespace unit_service_api
