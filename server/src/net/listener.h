#pragma once
// Opening a TCP listener on bind:port, shared by the RESP acceptor and the metrics endpoint.
#include <boost/asio/ip/tcp.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace latch {

// A listener that could not be opened; code() tells why (e.g. address_not_available).
class ListenError : public std::runtime_error {
 public:
  ListenError(const std::string& what, boost::system::error_code code)
      : std::runtime_error(what), code_(code) {}
  boost::system::error_code code() const { return code_; }

 private:
  boost::system::error_code code_;
};

// Opens, binds (SO_REUSEADDR) and listens; returns the bound port (port 0: the kernel's pick).
// Throws ListenError naming `what` (e.g. "server TCP") when any step fails, leaving the
// acceptor closed.
int OpenListener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& bind, int port,
                 int backlog, std::string_view what);

}  // namespace latch
