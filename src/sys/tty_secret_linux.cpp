// tty_secret_linux.cpp — a secret read from /dev/tty with echo off (see
// tty_secret.hpp).
#include "sys/tty_secret.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fd.hpp"  // ScopedFd

namespace courier::sys {

namespace {

constexpr std::size_t kMaxSecretLine = 1024;

void write_all(int fd, const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

Result<std::string> read_line(int fd) {
  std::string line;
  char c = 0;
  while (true) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(Errc::invalid_argument, "the terminal closed before a line was typed");
    if (c == '\n' || c == '\r') return line;
    if (line.size() >= kMaxSecretLine) return fail(Errc::invalid_argument, "the line typed is too long");
    line.push_back(c);
  }
}

}  // namespace

Result<std::string> read_secret_from_tty(const std::string& prompt) {
  const int raw = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (raw < 0) return fail(Errc::os_error, "no terminal to ask on (/dev/tty)");
  const ScopedFd tty(raw);
  termios saved{};
  const bool is_terminal = ::tcgetattr(tty.get(), &saved) == 0;
  if (is_terminal) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
    quiet.c_lflag |= ICANON;
    ::tcsetattr(tty.get(), TCSAFLUSH, &quiet);
  }
  write_all(tty.get(), prompt);
  auto line = read_line(tty.get());
  if (is_terminal) ::tcsetattr(tty.get(), TCSAFLUSH, &saved);
  write_all(tty.get(), "\n");
  return line;
}

}  // namespace courier::sys
