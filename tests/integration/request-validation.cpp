// request-validation.cpp — one request validation (courier::validate)
// behind every entry point: the same bad request gets the same field and
// code from the library, from `git-courier push` (its --json "errors") and
// from the service's POST /v1/deliveries; a request with several bad fields
// is refused with all of them; Executor::submit refuses what validate()
// refuses before any child, and uses a checked request's remote as read.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_router.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "repo/repository.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_request_validation {

using namespace courier;
using nlohmann::json;

namespace {

// A repository under the service's root, which the command line pushes
// from too, and a good request for it that each case spoils in one way.
struct Paths {
  test::ApiRouter router;
  std::string repo;
  std::string tip;
  std::string lanes;

  Paths() {
    repo = std::filesystem::canonical(router.root.path()).string() + "/source";
    tip = test::make_source_repo(repo, 1);
    lanes = router.root.path() + "/lanes";
  }

  struct Request {
    std::string remote = "https://127.0.0.1:9/r.git";
    std::string ref = "refs/heads/main";
    std::string oid;
    std::optional<std::string> expect_old;
  };

  // The library: validate(), looking at the object in the repository as
  // the command line and the service do.
  FieldErrors library(const Request& r) const {
    DeliveryRequest req;
    req.repo = repo;
    req.remote = r.remote;
    req.ref = r.ref;
    req.oid = r.oid;
    if (r.expect_old) {
      req.update = UpdateMode::expect_old;
      req.expect_old = r.expect_old;
    }
    ValidateOptions options;
    options.object_check = repo::check_gated_object;
    auto checked = validate(req, options);
    return checked ? FieldErrors{} : checked.error();
  }

  // The command line: exit 2, and --json's "errors" (its stderr says each
  // message on a line of its own).
  FieldErrors cli(const Request& r, std::string* err = nullptr) const {
    std::vector<std::string> argv = {COURIER_BINARY, "push",       "--json", "--repo",      repo,
                                     "--remote",     r.remote,     "--ref",  r.ref,         "--oid",
                                     r.oid,          "--lane-dir", lanes,    "--no-journal"};
    if (r.expect_old) {
      argv.push_back("--expect-old");
      argv.push_back(*r.expect_old);
    }
    auto run = test::run(argv, {}, test::Stdin::bytes, test::cli_env());
    CHECK_MESSAGE(run.exit_code == 2, run.err);
    if (err) *err = run.err;
    json j = json::parse(run.out, nullptr, false);
    REQUIRE_MESSAGE(j.is_object(), run.out);
    CHECK(j["outcome"] == "usage");
    FieldErrors out;
    for (const auto& e : j["errors"]) out.push_back({e["field"], e["code"], e["message"]});
    return out;
  }

  // The service: the first refusal is "error" (and decides the status),
  // all of them are "errors".
  FieldErrors service(const Request& r, int* status = nullptr) {
    json body = {{"repo", repo}, {"remote", r.remote}, {"ref", r.ref}, {"oid", r.oid}};
    if (r.expect_old) body["update"] = {{"expect_old", *r.expect_old}};
    auto resp = router.post(body);
    if (status) *status = resp.status;
    CHECK(resp.status == 400);
    json b = test::body_of(resp);
    REQUIRE(b["errors"].is_array());
    REQUIRE(!b["errors"].empty());
    CHECK(b["error"] == b["errors"][0]);
    FieldErrors out;
    for (const auto& e : b["errors"]) out.push_back({e["field"], e["code"], e["message"]});
    return out;
  }
};

std::vector<std::pair<std::string, std::string>> fields_and_codes(const FieldErrors& errors) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : errors) out.emplace_back(e.field, e.code);
  return out;
}

}  // namespace

TEST_SUITE("request") {
  TEST_CASE("H2 T1 T4: one bad request gets the same field and code from the library, push and the service") {
    Paths p;
    struct Case {
      const char* what;
      Paths::Request request;
      std::string field;
      std::string code;
      std::string says;
    };
    const std::string unknown(40, 'e');
    const std::vector<Case> cases = {
        {"a ref that is not a full ref name", {.ref = "main", .oid = p.tip}, "ref", "bad_field", "full ref name"},
        {"an oid that is not 40 hex digits", {.oid = "abc123"}, "oid", "bad_field", "40-hex"},
        {"an object the repository does not have", {.oid = unknown}, "oid", "bad_field", "not in the repository"},
        {"a remote's name nobody configured", {.remote = "nosuch", .oid = p.tip}, "remote", "bad_remote", "nosuch"},
        {"a URL with a password",
         {.remote = "https://u:Zq9secret@git.example/r.git", .oid = p.tip},
         "remote",
         "bad_remote",
         "password"},
        {"plain http to loopback without the allowance",
         {.remote = "http://127.0.0.1:9/r.git", .oid = p.tip},
         "remote",
         "bad_remote",
         "allow_http_loopback"},
        {"plain http to another host",
         {.remote = "http://192.0.2.1/r.git", .oid = p.tip},
         "remote",
         "bad_remote",
         "only https"},
        {"an ambiguous spelling",
         {.remote = "https://git.example/a/../r.git", .oid = p.tip},
         "remote",
         "bad_remote",
         "Write it as https://git.example/r.git"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      const auto want = std::vector<std::pair<std::string, std::string>>{{c.field, c.code}};
      const FieldErrors lib = p.library(c.request);
      CHECK(fields_and_codes(lib) == want);
      const FieldErrors cli = p.cli(c.request);
      CHECK(fields_and_codes(cli) == want);
      const FieldErrors svc = p.service(c.request);
      CHECK(fields_and_codes(svc) == want);
      for (const FieldErrors* errors : {&lib, &cli, &svc}) {
        for (const auto& e : *errors) {
          CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
          CHECK_MESSAGE(e.message.find("Zq9secret") == std::string::npos, e.message);
        }
      }
      // One message, whatever the path: the library's words.
      if (lib.size() == 1 && cli.size() == 1 && svc.size() == 1 && c.field != "remote") {
        CHECK(cli[0].message == lib[0].message);
        CHECK(svc[0].message == lib[0].message);
      }
    }
    // The lease's id: the library's field is expect_old; the service's body
    // spells it inside "update", and names that field.
    const Paths::Request lease{.oid = p.tip, .expect_old = "1"};
    CHECK(fields_and_codes(p.library(lease)) ==
          std::vector<std::pair<std::string, std::string>>{{"expect_old", "bad_field"}});
    CHECK(fields_and_codes(p.cli(lease)) ==
          std::vector<std::pair<std::string, std::string>>{{"expect_old", "bad_field"}});
    CHECK(fields_and_codes(p.service(lease)) ==
          std::vector<std::pair<std::string, std::string>>{{"update", "bad_field"}});
  }

  TEST_CASE("H2 T1 T4: a request with several bad fields is refused with every one of them, in the same order") {
    Paths p;
    const Paths::Request bad{.remote = "http://192.0.2.1/r.git", .ref = "main", .oid = "abc123"};
    const std::vector<std::pair<std::string, std::string>> want = {
        {"remote", "bad_remote"}, {"ref", "bad_field"}, {"oid", "bad_field"}};
    CHECK(fields_and_codes(p.library(bad)) == want);
    std::string err;
    CHECK(fields_and_codes(p.cli(bad, &err)) == want);
    // Each on a line of its own on stderr.
    CHECK_MESSAGE(err.find("git-courier: push: plain http:// is refused") != std::string::npos, err);
    CHECK_MESSAGE(err.find("git-courier: push: ref 'main' is not a full ref name") != std::string::npos, err);
    CHECK_MESSAGE(err.find("git-courier: push: oid 'abc123' is not a full 40-hex object id") != std::string::npos, err);
    int status = 0;
    CHECK(fields_and_codes(p.service(bad, &status)) == want);
    CHECK(status == 400);
  }

  TEST_CASE("H2 T1: Executor::submit refuses what validate() refuses, failed before any child, with every reason") {
    test::TempDir dir;
    ExecutorOptions eo;
    eo.lane_dir = dir.path() + "/lanes";
    Executor ex(eo);
    DeliveryRequest req;
    req.repo = dir.path();
    req.remote = "https://u:Zq9secret@git.example/r.git";
    req.ref = "main";
    req.oid = std::string(40, 'a');
    Outcome o = ex.submit(req).wait();
    CHECK(o.kind == OutcomeKind::failed);
    CHECK_MESSAGE(o.reason.find("password") != std::string::npos, o.reason);
    CHECK_MESSAGE(o.reason.find("ref 'main' is not a full ref name") != std::string::npos, o.reason);
    CHECK(o.reason.find("Zq9secret") == std::string::npos);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK(ex.spawned() == 0);

    // A checked request whose remote was changed after its validation is
    // judged again, never sent on what was read before.
    req.remote = "https://GIT.example:443/r.git";
    req.ref = "refs/heads/main";
    auto checked = validate(req);
    REQUIRE(checked.has_value());
    CHECK(checked->remote() == "https://git.example/r.git");
    CHECK(checked->updates().size() == 1);
    checked->request().remote = "http://192.0.2.1/r.git";
    Outcome changed = ex.submit(std::move(*checked)).wait();
    CHECK(changed.kind == OutcomeKind::failed);
    CHECK_MESSAGE(changed.reason.find("only https") != std::string::npos,
                  "a request changed after its validation went on its old reading: " << changed.reason);
    CHECK(ex.spawned() == 0);
  }
}

}  // namespace integration_request_validation
