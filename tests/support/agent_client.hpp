// agent_client.hpp — a test's SSH agent client: it connects to an agent
// socket and speaks the agent protocol, including requests real ssh never
// sends (a signature with no binding, a binding to another host key, a
// user-authentication request for another session or user), so the
// parent's agent can be seen refusing each.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace courier::test {

class AgentClient {
 public:
  explicit AgentClient(const std::string& socket_path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~AgentClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Sends one message (its body) and returns the answer's body; "" when
  // the agent closed the connection or said nothing within 5 s.
  std::string request(const std::string& body) {
    if (fd_ < 0) return {};
    std::string out;
    put_u32(out, static_cast<std::uint32_t>(body.size()));
    out += body;
    if (::send(fd_, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) return {};
    std::string head = read_n(4);
    if (head.size() != 4) return {};
    std::uint32_t len = 0;
    for (char c : head) len = (len << 8) | static_cast<std::uint8_t>(c);
    return read_n(len);
  }

  // Bytes as they are, with no length put before them.
  bool send_raw(const std::string& bytes) {
    return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  // True when the agent closed the connection (end of file within 5 s).
  bool closed_by_agent() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return false;
    char c;
    return ::recv(fd_, &c, 1, 0) <= 0;
  }

  // ---- messages (draft-miller-ssh-agent) --------------------------------
  static std::string identities() { return std::string(1, '\x0b'); }
  static std::string bind(const std::string& host_key, const std::string& session_id, const std::string& signature,
                          bool forwarding = false) {
    std::string m(1, '\x1b');
    put_string(m, "session-bind@openssh.com");
    put_string(m, host_key);
    put_string(m, session_id);
    put_string(m, signature);
    m.push_back(forwarding ? '\x01' : '\x00');
    return m;
  }
  static std::string sign(const std::string& key_blob, const std::string& data) {
    std::string m(1, '\x0d');
    put_string(m, key_blob);
    put_string(m, data);
    put_u32(m, 0);
    return m;
  }
  // RFC 4252 7: what ssh asks the agent to sign; `host_key` set: OpenSSH's
  // publickey-hostbound-v00@openssh.com method.
  static std::string userauth(const std::string& session_id, const std::string& user, const std::string& alg,
                              const std::string& key_blob, const std::string& host_key = {}) {
    std::string d;
    put_string(d, session_id);
    d.push_back('\x32');
    put_string(d, user);
    put_string(d, "ssh-connection");
    put_string(d, host_key.empty() ? "publickey" : "publickey-hostbound-v00@openssh.com");
    d.push_back('\x01');
    put_string(d, alg);
    put_string(d, key_blob);
    if (!host_key.empty()) put_string(d, host_key);
    return d;
  }
  // The signature inside a SIGN_RESPONSE ("" for anything else).
  static std::string signature_of(const std::string& answer) {
    if (answer.size() < 5 || answer[0] != '\x0e') return {};
    return answer.substr(5);
  }

  static void put_u32(std::string& out, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
  }
  static void put_string(std::string& out, const std::string& s) {
    put_u32(out, static_cast<std::uint32_t>(s.size()));
    out += s;
  }

 private:
  std::string read_n(std::size_t n) {
    std::string out;
    while (out.size() < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) return {};
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got <= 0) return {};
      out.append(buf, static_cast<std::size_t>(got));
    }
    return out;
  }

  int fd_ = -1;
};

}  // namespace courier::test
