// signals_linux.cpp — signalfd-based watcher.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "sys/io.hpp"
#include "sys/signals.hpp"

namespace courier::sys {

Result<std::unique_ptr<SignalWatcher>> SignalWatcher::start(std::function<void(int)> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  // SIGHUP (the terminal or session went away) ends the command like SIGTERM,
  // unless it was ignored on purpose when we started (`nohup`): that choice
  // is the user's, and is kept.
  struct sigaction hup {};
  if (::sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN) sigaddset(&set, SIGHUP);
  // A shell starts background jobs with SIGINT ignored, and an ignored
  // signal is discarded even while blocked: take both back to the default
  // so that an explicit `kill -INT` still reaches the signalfd.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, nullptr);
  ::sigaction(SIGTERM, &dfl, nullptr);
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return tl::unexpected(os_error("pthread_sigmask", errno));
  std::unique_ptr<SignalWatcher> w(new SignalWatcher());
  w->sigfd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!w->sigfd_) return tl::unexpected(os_error("signalfd", errno));
  auto stop = EventFd::create();
  if (!stop) return tl::unexpected(stop.error());
  w->stop_ = std::make_unique<EventFd>(std::move(*stop));
  w->on_signal_ = std::move(on_signal);
  w->thread_ = std::thread([p = w.get()] {
    for (;;) {
      auto ready = wait_readable_until({p->sigfd_.get(), p->stop_->fd()}, kForever);
      if (!ready) continue;
      for (std::size_t i : *ready) {
        if (i == 1) return;
      }
      signalfd_siginfo info{};
      while (::read(p->sigfd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        p->on_signal_(static_cast<int>(info.ssi_signo));
      }
    }
  });
  return w;
}

SignalWatcher::~SignalWatcher() {
  if (stop_) stop_->signal();
  if (thread_.joinable()) thread_.join();
}

}  // namespace courier::sys
