// capabilities.cpp — a delivery speaks only what the server advertised
// (T4): against git http-backend behind the TLS fixture server, whose
// advertisement is left as real git writes it (ofs-delta off through
// repack.useDeltaBaseOffset) or rewritten by the fixture (side-band-64k,
// quiet, report-status, object-format dropped; no-thin added). The POST's
// body is saved by the server and read back the way receive-pack reads it
// (fixtures/pack_objects.py): its commands and capabilities, and the type
// of every object in its pack; `git index-pack` without --fix-thin judges
// whether the pack stands alone.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "push_setup.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_capabilities {

using namespace courier;
using nlohmann::json;

namespace {

// A source whose history makes deltas: one 64 KiB file changed a little in
// each of `commits` commits, so every engine stores all but one version as
// a delta.
struct Setup : test::PushSetup {
  explicit Setup(int commits = 6) : PushSetup(1) {
    std::string text;
    for (int line = 0; line < 2048; ++line) text += "line " + std::to_string(line) + " of a file that deltas well\n";
    for (int c = 0; c < commits; ++c) {
      text.replace(static_cast<std::size_t>(c) * 40, 4, "EDIT");
      test::write_file(source + "/big.txt", text);
      test::git_ok({"add", "big.txt"}, source);
      test::git_ok({"commit", "-q", "-m", "edit " + std::to_string(c)}, source);
    }
    tip = rev("HEAD");
  }

  // The POST body of the next receive-pack request, saved by the server.
  std::string save_next_post(const std::string& name) {
    const std::string file = dir.path() + "/" + name + ".body";
    server.command({{"cmd", "save_body"}, {"method", "POST"}, {"path", "git-receive-pack"}, {"file", file}});
    return file;
  }

  void rewrite_advertisement(const json& drop, const json& add = json::array()) {
    server.command({{"cmd", "rewrite_capabilities"},
                    {"method", "GET"},
                    {"path", "service=git-receive-pack"},
                    {"drop", drop},
                    {"add", add}});
  }

  Outcome push(const std::string& repo_name, const std::string& oid, PackEngine engine) {
    Executor ex(executor_options());
    DeliveryRequest r = request(repo_name, oid);
    r.pack_engine = engine;
    if (engine == PackEngine::git) r.git_program = test::find_on_path("git");
    return ex.submit(r).wait();
  }
};

// What a saved POST body carried (fixtures/pack_objects.py).
json body_of(const std::string& file, const std::string& pack_out = {}) {
  std::vector<std::string> argv = {"/usr/bin/python3", test::source_path("fixtures/pack_objects.py"), file};
  if (!pack_out.empty()) argv.insert(argv.end(), {"--pack-out", pack_out});
  auto r = test::run(argv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out);
}

// The capabilities the request asked for: after the NUL of its first command.
std::string asked(const json& body) {
  const std::string first = body["commands"].at(0).get<std::string>();
  return first.substr(first.find('\0') + 1);
}

std::size_t count_of(const json& body, const char* type) { return body["types"].value(type, std::size_t{0}); }

}  // namespace

TEST_SUITE("capabilities") {
  TEST_CASE(
      "T4: a server without ofs-delta is sent no offset delta by either engine; with it, git's engine uses them") {
    Setup s;
    for (PackEngine engine : {PackEngine::git, PackEngine::libgit2}) {
      const std::string name = engine == PackEngine::git ? "git" : "libgit2";
      CAPTURE(name);
      s.server.create_bare_repo(name);
      test::git_ok({"--git-dir", s.server.repo_path(name), "config", "repack.useDeltaBaseOffset", "false"});
      const std::string saved = s.save_next_post(name);
      Outcome o = s.push(name, s.tip, engine);
      REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      const json body = body_of(saved);
      MESSAGE(name << " without ofs-delta: " << body["types"].dump());
      CHECK(count_of(body, "ofs_delta") == 0);
      CHECK(count_of(body, "ref_delta") > 0);
      CHECK(s.remote_ref(name) == s.tip);
    }
    s.server.create_bare_repo("offered");
    const std::string saved = s.save_next_post("offered");
    REQUIRE(s.push("offered", s.tip, PackEngine::git).kind == OutcomeKind::delivered);
    const json body = body_of(saved);
    MESSAGE("git with ofs-delta: " << body["types"].dump());
    CHECK_MESSAGE(count_of(body, "ofs_delta") > 0, "the check above could not see an offset delta");
  }

  TEST_CASE("T4: a server that says no-thin gets a pack that stands alone; without it, git's engine sends a thin one") {
    Setup s;
    for (bool no_thin : {true, false}) {
      CAPTURE(no_thin);
      const std::string name = no_thin ? "nothin" : "thin";
      s.server.create_bare_repo(name);
      REQUIRE(s.push(name, s.rev("HEAD~1"), PackEngine::git).kind == OutcomeKind::delivered);
      if (no_thin) s.rewrite_advertisement(json::array(), json::array({"no-thin"}));
      const std::string saved = s.save_next_post(name);
      Outcome o = s.push(name, s.tip, PackEngine::git);
      REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      const std::string pack = s.dir.path() + "/" + name + ".pack";
      (void)body_of(saved, pack);
      // index-pack without --fix-thin: a delta whose base is not in the
      // pack fails it ("pack has N unresolved deltas").
      const std::string alone = s.dir.path() + "/" + name + "-alone.git";
      test::git_ok({"init", "-q", "--bare", alone});
      auto judged = test::run({test::find_on_path("git"), "--git-dir=" + alone, "index-pack", "--stdin"},
                              test::read_file(pack), test::Stdin::bytes, test::git_env());
      if (no_thin) {
        CHECK_MESSAGE(judged.exit_code == 0, judged.err);
      } else {
        CHECK_MESSAGE(judged.exit_code != 0, "the thin pack stood alone: the no-thin check above could not fail");
      }
    }
  }

  TEST_CASE("T4: side-band-64k, quiet, report-status and object-format are asked for only when advertised") {
    Setup s;
    struct Case {
      const char* dropped;
      const char* must_not_ask;
    };
    for (const Case c : {Case{"side-band-64k", "side-band-64k"}, Case{"quiet", "quiet"},
                         Case{"report-status", "report-status "}, Case{"object-format", "object-format"}}) {
      const std::string name = std::string("r-") + c.dropped;
      CAPTURE(name);
      s.server.create_bare_repo(name);
      s.rewrite_advertisement(json::array({c.dropped}));
      const std::string saved = s.save_next_post(name);
      Outcome o = s.push(name, s.tip, PackEngine::libgit2);
      CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      const std::string caps = asked(body_of(saved)) + " ";
      CHECK_MESSAGE(caps.find(c.must_not_ask) == std::string::npos, caps);
      if (std::string(c.dropped) == "report-status") CHECK_MESSAGE(caps.find("report-status-v2") == 0, caps);
      CHECK(s.remote_ref(name) == s.tip);
    }
  }
}

}  // namespace integration_capabilities
