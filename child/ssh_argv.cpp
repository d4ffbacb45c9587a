// ssh_argv.cpp — ssh's command line and environment, declared in ssh_argv.hpp.
#include "child/ssh_argv.hpp"

#include <algorithm>

#include "sys/process.hpp"
#include "wire/remote.hpp"

namespace courier::child {

Result<SshTarget> parse_ssh_target(const std::string& remote) {
  auto parsed = wire::parse_remote(remote);
  if (!parsed) return tl::unexpected(parsed.error());
  auto endpoint = wire::ssh_endpoint(*parsed);
  if (!endpoint) return fail(Errc::scheme_refused, "not an ssh:// remote: " + parsed->canonical);
  return SshTarget{endpoint->user, endpoint->host, endpoint->port_given ? endpoint->port : 0,
                   wire::ssh_receive_pack_path(*parsed)};
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
  argv.insert(argv.end(), {"--", target.host, "git-receive-pack " + wire::shell_quote(target.path)});
  return argv;
}

std::vector<std::string> ssh_env() {
  std::vector<std::string> env = sys::environment();
  std::erase_if(env, [](const std::string& kv) { return kv.rfind("SSH_", 0) == 0; });
  return env;
}

}  // namespace courier::child
