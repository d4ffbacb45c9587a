// child.cpp — rule C2: `__delivery-push` run by hand refuses to act.
#include <doctest/doctest.h>

#include "child/delivery_push.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_child {

using namespace courier;

TEST_SUITE("child") {
  TEST_CASE("C2: __delivery-push with a terminal on stdin refuses with a clear message and its own code") {
    auto r = test::run({COURIER_BINARY, std::string(wire::kChildWord)}, {}, test::Stdin::tty);
    CHECK(r.exit_code == wire::kChildMisuse);
    CHECK(r.err.find("refuses to run from a terminal") != std::string::npos);
    CHECK(r.out.empty());
  }

  TEST_CASE("C2: __delivery-push whose stdin ends before a job refuses and never pushes") {
    auto r = test::run({COURIER_BINARY, std::string(wire::kChildWord)});
    CHECK(r.exit_code == wire::kChildMisuse);
    CHECK(r.err.find("never pushes without a job") != std::string::npos);
  }

  TEST_CASE("C2: __delivery-push whose first frame is not a valid job refuses") {
    for (std::string input :
         {test::raw_frame(R"({"type":"authority","phase":"x","ok":true})"), test::raw_frame(R"({"type":"job"})"),
          test::raw_frame("not json"), std::string("\x00\x00", 2), test::raw_frame("{}").substr(0, 5)}) {
      auto r = test::run({COURIER_BINARY, std::string(wire::kChildWord)}, input);
      CHECK(r.exit_code == wire::kChildMisuse);
      CHECK(r.err.find("never pushes without a job") != std::string::npos);
    }
  }

  TEST_CASE("C2: the child says hello first, with its pid, argv and environment keys") {
    auto r =
        test::run({COURIER_BINARY, std::string(wire::kChildWord)}, {}, test::Stdin::bytes, {"PATH=/usr/bin", "LANG=C"});
    protocol::FrameDecoder d;
    d.feed(r.out.data(), r.out.size());
    auto f = d.next();
    REQUIRE(f.has_value());
    REQUIRE(f->has_value());
    auto m = protocol::decode_child(**f);
    REQUIRE(m.has_value());
    auto* hello = std::get_if<protocol::Hello>(&*m);
    REQUIRE(hello != nullptr);
    CHECK(hello->pid > 0);
    CHECK(hello->argv == std::vector<std::string>{COURIER_BINARY, std::string(wire::kChildWord)});
    CHECK(hello->env_keys == std::vector<std::string>{"PATH", "LANG"});
  }
}

}  // namespace integration_child
