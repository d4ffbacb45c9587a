// auth-binding.cpp — rule A2's leg binding: a token is minted only for
// exactly one of this delivery's two legs, compared as parsed URLs; another
// destination is told apart (a protocol fault) from a wrong leg (a refusal).
#include <doctest/doctest.h>

#include "auth/minter.hpp"
#include "auth_support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_auth_binding {

using namespace courier;
using namespace courier::auth;
using namespace courier::test::auth_support;

namespace {

const std::string kR = "https://h.example/team/r.git";
const std::string kAdv = kR + "/info/refs?service=git-receive-pack";
const std::string kPost = kR + "/git-receive-pack";
const std::string kHash(64, 'e');

MintRequest req(const std::string& leg, const std::string& method, const std::string& url,
                std::optional<std::string> hash = std::nullopt) {
  return MintRequest{leg, method, url, std::move(hash), std::nullopt};
}

const char* name(BindingVerdict v) {
  switch (v) {
    case BindingVerdict::ok:
      return "ok";
    case BindingVerdict::refused:
      return "refused";
    case BindingVerdict::foreign:
      return "foreign";
  }
  return "?";
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("A2 binding: exactly the two legs of this remote are accepted, everything else is told apart") {
    struct Row {
      const char* what;
      MintRequest request;
      BindingVerdict want;
    };
    const std::vector<Row> rows = {
        // the two legs
        {"advertisement GET", req("advertisement", "GET", kAdv), BindingVerdict::ok},
        {"receive-pack POST", req("receive-pack", "POST", kPost, kHash), BindingVerdict::ok},
        // parsed comparison: host case and an explicit default port are the same destination
        {"host case", req("advertisement", "GET", "https://H.EXAMPLE/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::ok},
        {"explicit :443",
         req("advertisement", "GET", "https://h.example:443/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::ok},
        {"scheme case", req("receive-pack", "POST", "HTTPS://h.example/team/r.git/git-receive-pack", kHash),
         BindingVerdict::ok},
        // another destination: a protocol fault
        {"prefix trick .git.evil",
         req("advertisement", "GET", "https://h.example/team/r.git.evil/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"prefix trick r.gitx POST",
         req("receive-pack", "POST", "https://h.example/team/r.gitx/git-receive-pack", kHash), BindingVerdict::foreign},
        {"other host",
         req("advertisement", "GET", "https://evil.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"host suffix",
         req("advertisement", "GET", "https://h.example.evil.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"other port",
         req("advertisement", "GET", "https://h.example:8443/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"other scheme", req("advertisement", "GET", "http://h.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"http on :443",
         req("advertisement", "GET", "http://h.example:443/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"userinfo",
         req("advertisement", "GET", "https://user@h.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"userinfo hiding a host",
         req("advertisement", "GET", "https://h.example@evil.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"dot-dot out of the repo",
         req("advertisement", "GET", "https://h.example/team/r.git/../s.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"escaped dot-dot",
         req("receive-pack", "POST", "https://h.example/team/r.git/%2E%2e/s.git/git-receive-pack", kHash),
         BindingVerdict::foreign},
        {"single dot", req("advertisement", "GET", "https://h.example/team/r.git/./info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"path case", req("advertisement", "GET", "https://h.example/team/R.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"parent directory", req("advertisement", "GET", "https://h.example/team/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"fragment", req("advertisement", "GET", kAdv + "#x"), BindingVerdict::foreign},
        {"no scheme", req("advertisement", "GET", "h.example/team/r.git/info/refs?service=git-receive-pack"),
         BindingVerdict::foreign},
        {"whitespace", req("advertisement", "GET", "https://h.example/team/r.git/info/refs?service=git-receive-pack "),
         BindingVerdict::foreign},
        // this repository, not a leg we mint for: a refusal
        {"upload-pack advertisement", req("advertisement", "GET", kR + "/info/refs?service=git-upload-pack"),
         BindingVerdict::refused},
        {"advertisement without query", req("advertisement", "GET", kR + "/info/refs"), BindingVerdict::refused},
        {"extra query parameter", req("advertisement", "GET", kAdv + "&x=1"), BindingVerdict::refused},
        {"empty query", req("receive-pack", "POST", kPost + "?", kHash), BindingVerdict::refused},
        {"path case inside the repo", req("advertisement", "GET", kR + "/INFO/refs?service=git-receive-pack"),
         BindingVerdict::refused},
        {"double slash inside the repo", req("advertisement", "GET", kR + "//info/refs?service=git-receive-pack"),
         BindingVerdict::refused},
        {"upload-pack POST", req("receive-pack", "POST", kR + "/git-upload-pack", kHash), BindingVerdict::refused},
        {"an object path", req("advertisement", "GET", kR + "/objects/info/packs"), BindingVerdict::refused},
        {"advertisement as POST", req("advertisement", "POST", kAdv, kHash), BindingVerdict::refused},
        {"receive-pack as GET", req("receive-pack", "GET", kPost), BindingVerdict::refused},
        {"advertisement leg, receive-pack URL", req("advertisement", "GET", kPost), BindingVerdict::refused},
        {"receive-pack leg, advertisement URL", req("receive-pack", "POST", kAdv, kHash), BindingVerdict::refused},
        {"POST without body hash", req("receive-pack", "POST", kPost), BindingVerdict::refused},
        {"POST with upper-case hash", req("receive-pack", "POST", kPost, std::string(64, 'E')),
         BindingVerdict::refused},
        {"POST with short hash", req("receive-pack", "POST", kPost, std::string(63, 'e')), BindingVerdict::refused},
        {"GET with a body hash", req("advertisement", "GET", kAdv, kHash), BindingVerdict::refused},
        {"unknown leg", req("upload-pack", "GET", kR + "/info/refs?service=git-upload-pack"), BindingVerdict::refused},
    };
    for (const auto& row : rows) {
      CAPTURE(row.what);
      const Binding b = check_leg_binding(kR, row.request);
      CHECK_MESSAGE(b.verdict == row.want, row.what, ": got ", name(b.verdict), " (", b.reason, ")");
      if (b.verdict == BindingVerdict::ok) {
        CHECK(b.reason.empty());
        CHECK_FALSE(b.canonical.empty());
      } else {
        CHECK_FALSE(b.reason.empty());
      }
    }
  }

  TEST_CASE(
      "A2 binding: a remote's trailing slashes are dropped before the leg's suffix, in wire::leg_url and the binding") {
    for (const std::string& remote : {std::string(kR), kR + "/", kR + "//"}) {
      CAPTURE(remote);
      CHECK(wire::leg_url(remote, wire::Leg::advertisement) ==
            "https://h.example/team/r.git/info/refs?service=git-receive-pack");
      CHECK(wire::leg_url(remote, wire::Leg::receive_pack) == "https://h.example/team/r.git/git-receive-pack");
      CHECK(check_leg_binding(remote, req("advertisement", "GET", kAdv)).verdict == BindingVerdict::ok);
      CHECK(check_leg_binding(remote, req("receive-pack", "POST", kPost, kHash)).verdict == BindingVerdict::ok);
      CHECK(
          check_leg_binding(remote, req("advertisement", "GET", kR + "//info/refs?service=git-receive-pack")).verdict ==
          BindingVerdict::refused);
      CHECK(check_leg_binding(remote, req("receive-pack", "POST", kR + "//git-receive-pack", kHash)).verdict ==
            BindingVerdict::refused);
    }
    // A repository at the root.
    CHECK(wire::leg_url("https://h.example", wire::Leg::advertisement) ==
          "https://h.example/info/refs?service=git-receive-pack");
    CHECK(check_leg_binding("https://h.example/",
                            req("advertisement", "GET", "https://h.example/info/refs?service=git-receive-pack"))
              .verdict == BindingVerdict::ok);
    CHECK(wire::find_leg("upload-pack") == nullptr);
  }

  TEST_CASE("A2 H2 binding: the child's URL carries no user information, whatever the remote's") {
    // The child requests the canonical remote, which never carries user
    // information; a user name in the remote stays with the credential helper.
    const std::string remote = "https://bob@h.example/team/r.git";
    CHECK(check_leg_binding(remote, req("advertisement", "GET", kAdv)).verdict == BindingVerdict::ok);
    CHECK(check_leg_binding(remote, req("advertisement", "GET",
                                        "https://bob@h.example/team/r.git/info/refs?service=git-receive-pack"))
              .verdict == BindingVerdict::foreign);
    CHECK(check_leg_binding(remote, req("advertisement", "GET",
                                        "https://eve@h.example/team/r.git/info/refs?service=git-receive-pack"))
              .verdict == BindingVerdict::foreign);
  }

  TEST_CASE("A2 binding: a malformed remote refuses every request (never accepted, never blamed on the child)") {
    const Binding b = check_leg_binding("not a url", req("advertisement", "GET", kAdv));
    CHECK(b.verdict == BindingVerdict::refused);
  }
}

}  // namespace unit_auth_binding
