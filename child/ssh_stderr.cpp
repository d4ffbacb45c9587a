// ssh_stderr.cpp — reading ssh's stderr after a failure, declared in
// ssh_stderr.hpp.
#include "child/ssh_stderr.hpp"

#include <vector>

#include "wire/text.hpp"

namespace courier::child {

namespace {

constexpr std::size_t kMaxSaid = 1024;

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// ssh -v's own lines, and the banner of a changed key (a box of '@'s and
// advice for interactive users), are not what went wrong in few words.
bool is_noise(std::string_view line) {
  return line.rfind("debug", 0) == 0 || line.rfind("OpenSSH_", 0) == 0 || line.rfind("@@@", 0) == 0 ||
         line.rfind("Warning: Permanently added", 0) == 0;
}

}  // namespace

std::string ssh_server_host_key(std::string_view err) {
  constexpr std::string_view kLine = "Server host key: ";
  for (std::string_view line : lines_of(err)) {
    const auto at = line.find(kLine);
    if (at != std::string_view::npos) return wire::printable(line.substr(at + kLine.size()));
  }
  return {};
}

std::string ssh_said(std::string_view err) {
  std::string out;
  for (std::string_view line : lines_of(err)) {
    if (is_noise(line)) continue;
    if (!out.empty()) out += " | ";
    out += wire::printable(line);
    if (out.size() > kMaxSaid) {
      out.resize(kMaxSaid);
      out += "...";
      break;
    }
  }
  return out;
}

SshFailure classify_ssh_failure(std::string_view err, const std::string& alias, const std::string& what) {
  const std::string key = ssh_server_host_key(err);
  const std::string named = key.empty() ? std::string("its key was not shown") : "it showed " + key;
  if (has(err, "REMOTE HOST IDENTIFICATION HAS CHANGED")) {
    return {wire::DeliveryStatus::transport_failed,
            "the ssh host key of " + alias + " has changed: " + named +
                ", which the known hosts do not list for it; nothing was sent (check the new key with the server's "
                "owner before trusting it)"};
  }
  if (has(err, "host key is known for") || has(err, "Host key verification failed")) {
    return {wire::DeliveryStatus::transport_failed,
            "the ssh host key of " + alias + " is not known: " + named +
                "; nothing was sent (host keys are verified, never learned: add the server's key to the known "
                "hosts)"};
  }
  if (has(err, "Permission denied (")) {
    return {wire::DeliveryStatus::auth_failed,
            "the ssh server refused the key: " + ssh_said(err) + " (is the key's public half authorized there?)"};
  }
  const std::string said = ssh_said(err);
  return {wire::DeliveryStatus::transport_failed,
          "ssh failed while " + what + (said.empty() ? std::string(" (it said nothing)") : ": " + said)};
}

}  // namespace courier::child
