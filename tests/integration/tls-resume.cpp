// tls-resume.cpp — TLS session resumption between a delivery's two
// legs: the receive-pack POST resumes the session the advertisement GET
// negotiated, on a connection of its own (T2: fresh, never reused). The
// fixture server counts the handshakes that resumed (OpenSSL's own
// session_reused on its side of each connection).
#include <doctest/doctest.h>

#include <string>

#include "courier/courier.hpp"
#include "push_setup.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_tls_resume {

using namespace courier;

TEST_SUITE("push") {
  TEST_CASE("T2 X-TLS1: the POST resumes the advertisement's TLS session on a fresh connection of its own") {
    test::PushSetup s(2);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.request("r", s.tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(s.remote_ref("r") == s.tip);
    auto counts = s.server.command({{"cmd", "count"}});
    CHECK(s.posts("r") == 1);
    // Two connections: the POST did not ride on the GET's (T2) ...
    CHECK(counts["connections"] == 2);
    // ... and its handshake resumed the GET's session.
    CHECK_MESSAGE(counts["resumed_handshakes"] == 1, (std::string("server counts: ") + counts.dump()));
  }
}

}  // namespace integration_tls_resume
