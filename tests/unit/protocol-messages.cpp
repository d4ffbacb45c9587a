// protocol-messages.cpp — rule P1: strict message decoding, round trips.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "protocol/messages.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_protocol_messages {

using namespace courier;
using namespace courier::protocol;

namespace {
const std::string kOid(40, 'a');

Job sample_job() {
  Job j;
  j.parent_pid = 100;
  j.repo = "/srv/repo";
  j.remote = "https://127.0.0.1:8443/r.git";
  j.updates = {RefUpdate{"refs/heads/main", kOid, UpdateMode::fast_forward, std::nullopt}};
  j.deadline_mono_ns = 123456789;
  j.scratch_dir = "/tmp/x";
  return j;
}

Errc child_error(const std::string& json) {
  auto r = decode_child(json);
  REQUIRE_FALSE(r.has_value());
  return r.error().code;
}
}  // namespace

TEST_SUITE("protocol") {
  TEST_CASE("every child message round-trips through the codec") {
    const std::vector<ChildMessage> all = {
        Hello{1, 42, {"/x", "__delivery-push"}, {"PATH", "HOME"}, std::vector<int>{0, 1, 2, 3}},
        Hello{1, 42, {}, {}, std::nullopt},
        Mint{"advertisement", "GET", "https://h/r.git/info/refs?service=git-receive-pack", std::nullopt, std::nullopt},
        Mint{"receive-pack", "POST", "https://h/r.git/git-receive-pack", std::string(43, 'b'), 777},
        Check{"upload"},
        Check{"upload", {{"refs/heads/main", kOid}, {"refs/tags/v1", std::string(40, '0')}}},
        Progress{"pack", 5, 9},
        Progress{"remote", 0, 0, std::string("Resolving deltas: 100% (3/3)")},
        [] {
          ResultMsg r{wire::DeliveryStatus::up_to_date,
                      {RefResult{"refs/heads/main", RefStatus::up_to_date, std::nullopt, kOid}},
                      {},
                      {},
                      0,
                      0};
          r.advertise_ms = 12;
          r.pack_ms = 0;
          r.upload_ms = 0;
          return r;
        }(),
        ResultMsg{wire::DeliveryStatus::delivered,
                  {RefResult{"refs/heads/main", RefStatus::ok, std::nullopt, std::string(40, '0')},
                   RefResult{"refs/tags/v1", RefStatus::up_to_date, std::nullopt, kOid}},
                  std::nullopt,
                  std::nullopt,
                  3,
                  99},
        ResultMsg{wire::DeliveryStatus::rejected,
                  {RefResult{"refs/heads/main", RefStatus::rejected, "non-fast-forward", std::nullopt}},
                  "non-fast-forward",
                  "detail",
                  std::nullopt,
                  std::nullopt}};
    for (const auto& m : all) {
      auto body = encode(m);
      REQUIRE(body.has_value());
      auto back = decode_child(*body);
      REQUIRE_MESSAGE(back.has_value(), *body);
      CHECK(*back == m);
    }
  }

  TEST_CASE("every parent message round-trips through the codec") {
    Job full = sample_job();
    full.updates.front().expect_old = std::string(40, 'c');
    full.updates.front().update = UpdateMode::expect_old;
    full.updates.push_back(RefUpdate{"refs/tags/v1", std::string(40, '0'), UpdateMode::force, std::nullopt});
    full.atomic = true;
    full.redelivery = true;
    full.push_options = {"ci.skip", "merge_request.create"};
    full.ca_file = "/ca.pem";
    full.ca_source = "GIT_SSL_CAINFO";
    full.authenticated = true;
    full.challenge_first = true;
    full.allow_http_loopback = true;
    full.pack_git = "/usr/bin/git";
    full.pack_auto = true;
    full.proxy = "http://127.0.0.1:3128";
    Job forced = sample_job();
    forced.updates.front().update = UpdateMode::force;
    const std::vector<ParentMessage> all = {
        sample_job(),
        full,
        forced,
        Authority{"advertisement", true, std::nullopt, "Proxy-Authorization: Basic dTpw"},
        Minted{"advertisement", "Authorization: Bearer t", std::nullopt},
        Minted{"receive-pack", std::nullopt, "deadline passed"},
        Authority{"upload", true, std::nullopt},
        Authority{"upload", false, "revoked by host"}};
    for (const auto& m : all) {
      auto body = encode(m);
      REQUIRE(body.has_value());
      auto back = decode_parent(*body);
      REQUIRE_MESSAGE(back.has_value(), *body);
      CHECK(*back == m);
    }
  }

  TEST_CASE("a job whose git pack engine is not an absolute path is refused") {
    Job j = sample_job();
    j.pack_git = "git";
    auto body = encode(ParentMessage{j});
    REQUIRE(body.has_value());
    auto back = decode_parent(*body);
    REQUIRE_FALSE(back.has_value());
    CHECK(back.error().code == Errc::invalid_value);
    CHECK(back.error().message.find("'pack_git'") != std::string::npos);
  }

  TEST_CASE("T2: a job that asks for a challenge first (challenge_first) without credentials is refused") {
    Job j = sample_job();
    j.challenge_first = true;
    auto body = encode(ParentMessage{j});
    REQUIRE(body.has_value());
    auto back = decode_parent(*body);
    REQUIRE_FALSE(back.has_value());
    CHECK(back.error().code == Errc::invalid_value);
    CHECK(back.error().message.find("'challenge_first'") != std::string::npos);
  }

  TEST_CASE("a job that lets the child choose its pack engine (pack_auto) without a git to choose is refused") {
    Job j = sample_job();
    j.pack_auto = true;
    auto body = encode(ParentMessage{j});
    REQUIRE(body.has_value());
    auto back = decode_parent(*body);
    REQUIRE_FALSE(back.has_value());
    CHECK(back.error().code == Errc::invalid_value);
    CHECK(back.error().message.find("'pack_auto'") != std::string::npos);
  }

  TEST_CASE("a job's update mode is a required word; expect_old mode needs expect_old, both ways") {
    auto body = encode(ParentMessage{sample_job()});
    REQUIRE(body.has_value());
    CHECK(body->find(R"("update":"fast_forward")") != std::string::npos);
    nlohmann::json whole = nlohmann::json::parse(*body);
    auto decode_with = [&whole](const nlohmann::json& update) {
      nlohmann::json copy = whole;
      copy["updates"] = nlohmann::json::array({update});
      return decode_parent(copy.dump());
    };
    nlohmann::json j = whole["updates"][0];
    j.erase("update");
    auto missing = decode_with(j);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == Errc::missing_field);
    CHECK(missing.error().message.find("'update'") != std::string::npos);
    j["update"] = "rebase";
    auto unknown = decode_with(j);
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().code == Errc::invalid_value);
    j["update"] = "expect_old";
    auto no_old = decode_with(j);
    REQUIRE_FALSE(no_old.has_value());
    CHECK(no_old.error().code == Errc::missing_field);
    CHECK(no_old.error().message.find("'expect_old'") != std::string::npos);
    Job cas = sample_job();
    cas.updates.front().update = UpdateMode::expect_old;
    CHECK_FALSE(encode(ParentMessage{cas}).has_value());
  }

  TEST_CASE("a missing field is an error naming the field") {
    auto r = decode_child(R"({"type":"check"})");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::missing_field);
    CHECK(r.error().message.find("'phase'") != std::string::npos);
    CHECK(child_error(R"({"phase":"x"})") == Errc::missing_field);
  }

  TEST_CASE("a field of the wrong type is an error naming the field") {
    auto r = decode_child(R"({"type":"progress","phase":"pack","done":"3","total":4})");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::wrong_type);
    CHECK(r.error().message.find("'done'") != std::string::npos);
    CHECK(child_error(R"({"type":"progress","phase":"pack","done":-1,"total":4})") == Errc::wrong_type);
    CHECK(child_error(R"({"type":7})") == Errc::wrong_type);
    CHECK(child_error(R"({"type":"hello","version":1.5,"pid":3,"argv":[],"env_keys":[]})") == Errc::wrong_type);
  }

  TEST_CASE("an unknown message type is an error") {
    CHECK(child_error(R"({"type":"job"})") == Errc::unknown_type);
    CHECK(child_error(R"({"type":"launch_missiles"})") == Errc::unknown_type);
    auto r = decode_parent(R"({"type":"hello"})");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::unknown_type);
  }

  TEST_CASE("an extra unknown field is an error naming the field") {
    auto r = decode_child(R"({"type":"check","phase":"x","sneaky":1})");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::unknown_field);
    CHECK(r.error().message.find("'sneaky'") != std::string::npos);
  }

  TEST_CASE("malformed JSON and non-objects are errors, never exceptions") {
    CHECK(child_error("{") == Errc::malformed_json);
    CHECK(child_error("[1,2]") == Errc::malformed_json);
    CHECK(child_error("\"hello\"") == Errc::malformed_json);
    CHECK(child_error("{\"type\":\"check\",\"phase\":\"x\"} trailing") == Errc::malformed_json);
    CHECK(child_error("{\"type\":\"check\",\"phase\":\"\xC3\x28\"}") == Errc::invalid_utf8);
  }

  TEST_CASE("minted with both or neither of header and refused is malformed") {
    auto both = decode_parent(R"({"type":"minted","leg":"advertisement","header":"h","refused":"r"})");
    REQUIRE_FALSE(both.has_value());
    CHECK(both.error().code == Errc::invalid_value);
    auto neither = decode_parent(R"({"type":"minted","leg":"advertisement"})");
    REQUIRE_FALSE(neither.has_value());
    CHECK(neither.error().code == Errc::invalid_value);
    CHECK_FALSE(encode(ParentMessage{Minted{"advertisement", "h", "r"}}).has_value());
    CHECK_FALSE(encode(ParentMessage{Minted{"advertisement", std::nullopt, std::nullopt}}).has_value());
  }

  TEST_CASE("an authority grant that also carries a refusal is ambiguous and malformed") {
    auto r = decode_parent(R"({"type":"authority","phase":"upload","ok":true,"reason":"no"})");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::invalid_value);
  }

  TEST_CASE("T1: proxy credentials come only with a grant, and a job's proxy never carries them") {
    auto refusal = decode_parent(
        R"({"type":"authority","phase":"upload","ok":false,"reason":"no","proxy_authorization":"Proxy-Authorization: Basic dTpw"})");
    REQUIRE_FALSE(refusal.has_value());
    CHECK(refusal.error().code == Errc::invalid_value);
    CHECK_FALSE(encode(ParentMessage{Authority{"upload", false, "no", "Proxy-Authorization: Basic dTpw"}}).has_value());
    Job j = sample_job();
    j.proxy = "http://u:p@127.0.0.1:3128";
    auto body = encode(ParentMessage{j});
    REQUIRE(body.has_value());
    auto back = decode_parent(*body);
    REQUIRE_FALSE(back.has_value());
    CHECK(back.error().code == Errc::invalid_value);
  }

  TEST_CASE("a result must name its refs, each with a known status, and a known status of its own") {
    CHECK(child_error(R"({"type":"result","status":"delivered"})") == Errc::missing_field);
    CHECK(child_error(R"({"type":"result","status":"delivered","refs":[]})") == Errc::invalid_value);
    CHECK(child_error(R"({"type":"result","status":"delivered","refs":[{"ref":"refs/heads/x"}]})") ==
          Errc::missing_field);
    CHECK(child_error(R"({"type":"result","status":"delivered","refs":[{"ref":"refs/heads/x","status":"fine"}]})") ==
          Errc::invalid_value);
    CHECK(child_error(R"({"type":"result","status":"great","refs":[{"ref":"refs/heads/x","status":"ok"}]})") ==
          Errc::invalid_value);
    CHECK(child_error(R"({"type":"result","status":"delivered","refs":["refs/heads/x"]})") == Errc::wrong_type);
  }

  TEST_CASE("P1: a message with a key twice in one object is refused at parse, at any depth and in both directions") {
    // Last-wins would read this as delivered.
    auto r = decode_child(R"({"type":"result","status":"failed","refs":[{"ref":"refs/heads/main","status":"ok"}],)"
                          R"("status":"delivered"})");
    CHECK_MESSAGE(!r.has_value(), "a duplicate key was resolved instead of refused");
    if (!r) {
      CHECK(r.error().code == Errc::duplicate_key);
      CHECK(r.error().message.find("'status'") != std::string::npos);
    }
    // The same key twice with the same value is still two keys.
    CHECK(child_error(R"({"type":"check","phase":"x","phase":"x"})") == Errc::duplicate_key);
    // "type" itself, which picks the decoder.
    CHECK(child_error(R"({"type":"check","type":"progress","phase":"x","done":1,"total":1})") == Errc::duplicate_key);
    // Nested: inside an array, inside an object that is itself a value.
    CHECK(child_error(R"({"type":"check","phase":"x","extra":[{"a":1,"a":2}]})") == Errc::duplicate_key);
    CHECK(child_error(R"({"type":"check","phase":"x","extra":{"in":{"k":1,"k":1}}})") == Errc::duplicate_key);
    // The same key in two sibling objects is not a duplicate: that message
    // fails only on its unknown field.
    CHECK(child_error(R"({"type":"check","phase":"x","extra":[{"a":1},{"a":2}]})") == Errc::unknown_field);
    auto p = decode_parent(R"({"type":"authority","phase":"upload","ok":false,"ok":true})");
    CHECK_MESSAGE(!p.has_value(), "a duplicate key was resolved instead of refused");
    if (!p) CHECK(p.error().code == Errc::duplicate_key);
    // A key from the peer is capped in the message.
    const std::string long_key(100'000, 'k');
    auto big = decode_child(R"({"type":"check","phase":"x",")" + long_key + R"(":1,")" + long_key + R"(":2})");
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().code == Errc::duplicate_key);
    CHECK(big.error().message.size() < 200);
  }

  TEST_CASE("a mint names a known leg and method") {
    CHECK(child_error(R"({"type":"mint","leg":"other","method":"GET","url":"https://h/"})") == Errc::invalid_value);
    CHECK(child_error(R"({"type":"mint","leg":"advertisement","method":"PUT","url":"https://h/"})") ==
          Errc::invalid_value);
  }

  TEST_CASE("a job with an empty repo or a non-positive deadline is refused") {
    Job j = sample_job();
    j.repo = "";
    auto r = decode_parent(*encode(ParentMessage{j}));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("'repo'") != std::string::npos);
    j = sample_job();
    j.deadline_mono_ns = 0;
    CHECK_FALSE(decode_parent(*encode(ParentMessage{j})).has_value());
  }
}

}  // namespace unit_protocol_messages
