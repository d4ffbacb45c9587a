// agent_server.cpp — one SSH delivery's agent socket (agent_server.hpp).
#include "agent/agent_server.hpp"

#include "agent/agent_session.hpp"
#include "sys/file.hpp"
#include "sys/io.hpp"
#include "sys/process_owner.hpp"
#include "sys/scratch_dir.hpp"
#include "sys/tree_removal.hpp"

namespace courier::agent {

namespace {

// Removing the directory (three files) never holds the delivery's end longer.
constexpr sys::MonoNs kRemovalBound = 100 * sys::kNsPerMs;

Result<void> write_file(const std::string& path, const std::string& text) {
  auto fd = sys::create_new_file(path, 0600);
  if (!fd) return tl::unexpected(fd.error());
  return sys::write_all(fd->get(), text.data(), text.size());
}

}  // namespace

bool in_kill_domain(std::int64_t pid, const KillDomainFacts& domain) {
  if (pid <= 0) return false;
  auto owner = sys::process_owner(static_cast<pid_t>(pid));
  if (!owner) return false;
  if (!domain.cgroup.empty()) {
    // /proc/<pid>/cgroup names the cgroup from the hierarchy's root; the
    // domain's is that path under the cgroup2 mount.
    // It starts with '/', so a match ends on a whole component.
    const std::string& cg = owner->cgroup;
    return cg.size() > 1 && cg[0] == '/' && domain.cgroup.ends_with(cg);
  }
  return owner->pgid == static_cast<pid_t>(domain.leader);
}

Result<std::unique_ptr<AgentServer>> AgentServer::start(const std::string& parent, const std::string& name_prefix,
                                                        AgentRules rules, KillDomainFacts domain) {
  std::unique_ptr<AgentServer> a(new AgentServer());
  a->rules_ = std::move(rules);
  a->domain_ = std::move(domain);
  auto wake = sys::EventFd::create();
  if (!wake) return tl::unexpected(wake.error());
  a->wake_ = std::move(*wake);
  if (auto made = a->make_files(parent, name_prefix); !made) return tl::unexpected(made.error());
  a->thread_ = std::thread([p = a.get()] { p->serve(); });
  return a;
}

Result<void> AgentServer::make_files(const std::string& parent, const std::string& name_prefix) {
  auto p = sys::open_private_dir(parent);
  if (!p) return tl::unexpected(p.error());
  parent_ = std::move(*p);
  auto dir = sys::make_unique_dir(parent + "/" + name_prefix);
  if (!dir) return tl::unexpected(dir.error());
  place_.dir = *dir;
  name_ = dir->substr(parent.size() + 1);
  place_.socket = *dir + "/agent";
  place_.identity = *dir + "/id.pub";
  place_.known_hosts = *dir + "/known_hosts";
  if (auto w = write_file(place_.identity, rules_.key->public_line() + "\n"); !w) return w;
  if (auto w = write_file(place_.known_hosts, known_hosts_text(rules_.host_keys)); !w) return w;
  auto d = sys::open_private_dir(*dir);
  if (!d) return tl::unexpected(d.error());
  auto l = sys::listen_unix_at(d->fd.get(), "agent", place_.socket);
  if (!l) return tl::unexpected(l.error());
  listener_ = std::move(*l);
  return {};
}

AgentServer::~AgentServer() {
  stop();
  listener_.file.remove();
  listener_.fd.reset();
  if (parent_.fd && !name_.empty()) {
    (void)sys::remove_tree_until(parent_.fd.get(), name_, sys::mono_now_ns() + kRemovalBound);
  }
}

void AgentServer::stop() {
  stopped_ = true;
  wake_.signal();
  if (thread_.joinable()) thread_.join();
}

void AgentServer::event(const std::string& line) const {
  if (rules_.on_event) rules_.on_event(line);
}

void AgentServer::serve() {
  bool taken = false;
  // Serving ends at the deadline, whatever is ready then.
  while (!stopped_.load() && sys::mono_now_ns() < rules_.deadline) {
    std::vector<int> fds = {wake_.fd(), listener_.fd.get()};
    if (conn_) fds.push_back(conn_.get());
    auto ready = sys::wait_readable_until(fds, rules_.deadline);
    if (!ready || ready->empty()) break;  // the deadline, or poll failed
    for (std::size_t i : *ready) {
      if (i == 1) on_listener(taken);
      if (i == 2 && !on_connection()) conn_.reset();
    }
  }
  conn_.reset();
  listener_.fd.reset();  // a late connection is refused by the kernel
}

// One connection, from the delivery's kill domain; every other refused.
void AgentServer::on_listener(bool& taken) {
  auto c = sys::accept_unix(listener_.fd.get());
  if (!c || !*c) return;
  sys::ScopedFd fd = std::move(**c);
  auto pid = sys::peer_pid(fd.get());
  const std::string who = pid ? "pid " + std::to_string(*pid) : "an unknown process";
  if (taken) {
    event("ssh agent refused: a second connection (" + who + "); one connection per delivery");
    return;
  }
  if (!pid || !in_kill_domain(*pid, domain_)) {
    event("ssh agent refused: a connection from " + who + ", outside the delivery's kill domain");
    return;
  }
  taken = true;
  conn_ = std::move(fd);
}

bool AgentServer::on_connection() {
  char buf[16 * 1024];
  for (;;) {
    auto r = sys::read_nonblocking(conn_.get(), buf, sizeof buf);
    if (!r || r->status == sys::ReadStatus::eof) return false;
    if (r->status == sys::ReadStatus::would_block) return answer_all();
    inbox_.append(buf, r->bytes);
    if (inbox_.size() > kMaxAgentMessage + 4) break;
  }
  event("ssh agent refused: a message over " + std::to_string(kMaxAgentMessage) + " bytes; connection closed");
  return false;
}

bool AgentServer::answer_all() {
  while (inbox_.size() >= 4) {
    std::uint32_t len = 0;
    for (std::size_t i = 0; i < 4; ++i) len = (len << 8) | static_cast<std::uint8_t>(inbox_[i]);
    if (len > kMaxAgentMessage) {
      event("ssh agent refused: a message over " + std::to_string(kMaxAgentMessage) + " bytes; connection closed");
      return false;
    }
    if (inbox_.size() < 4 + len) return true;
    if (!session_) session_ = std::make_unique<AgentSession>(rules_);
    const std::string answer = session_->answer(std::string_view(inbox_).substr(4, len));
    inbox_.erase(0, 4 + len);
    if (!write_answer(answer)) return false;
  }
  return true;
}

bool AgentServer::write_answer(const std::string& body) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((body.size() >> shift) & 0xFF));
  out += body;
  std::size_t at = 0;
  while (at < out.size()) {
    auto n = sys::write_nonblocking(conn_.get(), out.data() + at, out.size() - at);
    if (!n) return false;
    at += *n;
    if (*n == 0) {
      auto w = sys::wait_fd_until(conn_.get(), sys::kWritable, rules_.deadline);
      if (!w || !*w) return false;
    }
  }
  return true;
}

}  // namespace courier::agent
