// ssh_argv.cpp — ssh's command line and environment, declared in ssh_argv.hpp.
#include "child/ssh_argv.hpp"

#include <algorithm>

#include "sys/process.hpp"
#include "wire/url.hpp"

namespace courier::child {

Result<SshTarget> parse_ssh_target(const std::string& remote) {
  auto url = wire::parse_url(remote, "remote");
  if (!url) return tl::unexpected(url.error());
  if (url->scheme != "ssh") return fail(Errc::scheme_refused, "not an ssh:// remote: " + url->without_userinfo());
  SshTarget t;
  if (url->userinfo) {
    if (url->userinfo->find(':') != std::string::npos) {
      return fail(Errc::invalid_argument, "a password in an ssh:// remote is refused: ssh authenticates with keys");
    }
    t.user = wire::percent_decode(*url->userinfo);
  }
  t.host = url->host;
  if (t.host.size() > 2 && t.host.front() == '[') t.host = t.host.substr(1, t.host.size() - 2);
  t.port = url->port_given ? url->port : 0;
  t.path = wire::percent_decode(url->path);
  if (t.path.rfind("/~", 0) == 0) t.path.erase(0, 1);
  return t;
}

std::string ssh_shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '!') {
      out += "'\\";
      out += c;
      out += '\'';
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> ssh_argv(const protocol::SshJob& job, const SshTarget& target, sys::MonoNs deadline) {
  const sys::MonoNs left = deadline - sys::mono_now_ns();
  const long long seconds = std::max<long long>(1, left / (1000 * sys::kNsPerMs));
  std::vector<std::string> argv = {job.program, "-v"};
  const std::vector<std::pair<std::string, std::string>> options = {
      {"StrictHostKeyChecking", "yes"},
      {"UserKnownHostsFile", job.known_hosts},
      {"GlobalKnownHostsFile", "none"},
      {"UpdateHostKeys", "no"},
      {"IdentitiesOnly", "yes"},
      {"IdentityFile", job.identity},
      {"IdentityAgent", job.agent_socket},
      {"ControlMaster", "no"},
      {"ControlPath", "none"},
      {"BatchMode", "yes"},
      {"HostKeyAlias", job.host_key_alias},
      {"PasswordAuthentication", "no"},
      {"KbdInteractiveAuthentication", "no"},
      {"ForwardAgent", "no"},
      {"ForwardX11", "no"},
      {"ClearAllForwardings", "yes"},
      {"PermitLocalCommand", "no"},
      {"RequestTTY", "no"},
      {"ConnectTimeout", std::to_string(seconds)},
  };
  for (const auto& [name, value] : options) {
    argv.emplace_back("-o");
    argv.push_back(name + "=" + value);
  }
  if (target.port != 0) argv.insert(argv.end(), {"-p", std::to_string(target.port)});
  if (!target.user.empty()) argv.insert(argv.end(), {"-l", target.user});
  argv.insert(argv.end(), {"--", target.host, "git-receive-pack " + ssh_shell_quote(target.path)});
  return argv;
}

std::vector<std::string> ssh_env() {
  std::vector<std::string> env = sys::environment();
  std::erase_if(env, [](const std::string& kv) { return kv.rfind("SSH_", 0) == 0; });
  return env;
}

}  // namespace courier::child
