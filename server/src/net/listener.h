#pragma once
// Opening a TCP listener on bind:port, shared by the RESP acceptor and the metrics endpoint.
#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>

namespace latch {

// Opens, binds (SO_REUSEADDR) and listens; returns the bound port (port 0: the kernel's pick).
// Throws std::runtime_error naming `what` (e.g. "server TCP") when any step fails, leaving
// the acceptor closed.
int OpenListener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& bind, int port,
                 int backlog, std::string_view what);

}  // namespace latch
