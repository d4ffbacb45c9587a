// serve.hpp — `git-courier serve`: the service's lifecycle. Binds its
// sockets, runs deliveries in one Executor behind the API, and on SIGTERM
// or SIGINT drains: no new delivery (503 draining), the accepted ones run
// until --drain-timeout, the rest are revoked, and the process exits 0 only
// once every delivery has finished (stops confirmed) and is journalled.
#pragma once

#include <string>

#include "courier/courier.hpp"
#include "service/service_options.hpp"

namespace courier::service {

// Runs the service until a SIGTERM or SIGINT has been drained; returns the
// exit code (0 after a drain; 2 for a configuration that cannot run; 3 when
// a library, a socket or the journal cannot be had). `journal` is the
// journal's path (the caller's default when not given); `read_back` is the
// executor's read-back after `possible`.
int run_serve(const ServiceOptions& options, const std::string& journal, ReadBackFn read_back);

}  // namespace courier::service
