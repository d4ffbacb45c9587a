// delivery_push.cpp — the delivery child: hello, job, work, result.
#include "child/delivery_push.hpp"

#include <cstdio>
#include <string>

#include "child/channel.hpp"
#include "child/lease_watch.hpp"
#include "child/pack.hpp"
#include "child/push.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "sys/io.hpp"
#include "sys/lazy_library.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "sys/unix_socket.hpp"
#include "transport/http_leg.hpp"

namespace courier::child {

namespace {

constexpr int kIn = 0;
constexpr int kOut = 1;

void say(const std::string& line) {
  std::fprintf(stderr, "git-courier %s: %s\n", std::string(wire::kChildWord).c_str(), line.c_str());
}

bool send(const protocol::ChildMessage& m) {
  auto body = protocol::encode(m);
  if (!body) {
    say("cannot encode " + std::string(protocol::type_name(m)) + ": " + body.error().message);
    return false;
  }
  auto w = protocol::write_frame(kOut, *body);
  if (!w) {
    say("cannot write to the parent: " + w.error().message);
    return false;
  }
  return true;
}

// A job with a lease bound: the child's own lease timer (L2), armed before
// any leg. False (said on stderr) when it cannot be armed: the child then
// never pushes, rather than push unbounded.
bool start_lease_watch(const protocol::Job& job, std::unique_ptr<LeaseWatch>& watch) {
  if (!job.lease_bound_mono_ns) return true;
  auto started = LeaseWatch::start(kIn, *job.lease_bound_mono_ns);
  if (!started) {
    say("cannot arm the lease timer: " + started.error().message + "; it never pushes unbounded");
    return false;
  }
  watch = std::move(*started);
  return true;
}

}  // namespace

int run_delivery_push(int argc, char** argv) {
  // First thing: die with the spawning thread (S6). The spawner set this
  // before exec as well; setting it again costs nothing and covers a parent
  // that is not ours.
  (void)sys::set_parent_death_kill();

  if (sys::is_tty(kIn)) {
    say("this is an internal command that git-courier runs for itself; it reads a job frame "
        "from its parent on stdin and refuses to run from a terminal. Use `git-courier push`.");
    return wire::kChildMisuse;
  }

  protocol::Hello hello;
  hello.pid = sys::self_pid();
  for (int i = 0; i < argc; ++i) hello.argv.emplace_back(argv[i]);
  hello.env_keys = sys::environment_keys();
  hello.fds = sys::open_fds();
  if (!send(hello)) return wire::kChildProtocolFailure;

  // While the job is on its way (or, for a warm child, not yet assigned),
  // load and initialise libgit2 and libcurl (and libcrypto, for the payload
  // digest): their set-up then is off the delivery's path instead of before
  // its first leg, and after the hello, so the parent's spawn -> hello does
  // not wait for them. A library that cannot be loaded ends the child here,
  // with the loader's reason on stderr, before it takes a job.
  if (auto libs =
          sys::load_shared_libraries({sys::SharedLibrary::git2, sys::SharedLibrary::curl, sys::SharedLibrary::crypto});
      !libs) {
    say(libs.error().message);
    return sys::kExitLibraryMissing;
  }
  init_libgit2();
  transport::init_transport();

  // Over a socket (a warm child) the job may carry the lane lock with it:
  // it arrives as a passed descriptor and takes the fixed number kInheritedFd.
  sys::ScopedFd passed;
  auto frame = sys::is_socket(kIn) ? protocol::read_frame_from([&passed](char* buf, std::size_t len) {
    return sys::recv_with_fd(kIn, buf, len, passed);
  })
                                   : protocol::read_frame(kIn);
  if (passed) {
    if (auto moved = sys::move_fd(std::move(passed), sys::kInheritedFd); !moved) {
      say("cannot take the lane lock: " + moved.error().message);
      return wire::kChildProtocolFailure;
    }
  }
  if (!frame || !*frame) {
    say(std::string("no job: ") + (frame ? "stdin ended before a job frame arrived" : frame.error().message) +
        ". This command only runs under `git-courier push`; it never pushes without a job.");
    return wire::kChildMisuse;
  }
  auto msg = protocol::decode_parent(**frame);
  if (!msg || !std::holds_alternative<protocol::Job>(*msg)) {
    say(std::string("the first frame is not a valid job: ") +
        (msg ? std::string("got '") + protocol::type_name(*msg) + "'" : msg.error().message) +
        ". It never pushes without a job.");
    return wire::kChildMisuse;
  }
  const auto& job = std::get<protocol::Job>(*msg);
  // The death signal follows the thread that spawned us; if that parent is
  // already gone we were re-parented before the signal was armed.
  if (sys::parent_pid() != job.parent_pid) {
    say("the parent named in the job (" + std::to_string(job.parent_pid) + ") is not this process's parent; exiting");
    return wire::kChildOrphaned;
  }

  // L2: with a lease, the child bounds itself too, from before any leg.
  std::unique_ptr<LeaseWatch> lease;
  if (!start_lease_watch(job, lease)) return wire::kChildProtocolFailure;
  Channel channel(kIn, kOut, lease.get());
  protocol::ResultMsg result = run_push(job, channel);
  if (!send(result)) return wire::kChildProtocolFailure;
  return wire::status_succeeded(result.status) ? wire::kChildDone : wire::kChildPushFailed;
}

}  // namespace courier::child
