#include "net/listener.h"

#include <boost/asio/ip/v6_only.hpp>
#include <stdexcept>

namespace latch {

int OpenListener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& bind, int port,
                 int backlog, std::string_view what) {
  using boost::asio::ip::tcp;
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(bind, ec);
  if (ec) throw ListenError("invalid bind address '" + bind + "'", ec);
  tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  // As Redis: an IPv6 listener takes IPv6 only, so "bind 0.0.0.0 ::" opens two listeners
  // instead of the second colliding with the first through a dual-stack socket.
  if (!ec && addr.is_v6()) acceptor.set_option(boost::asio::ip::v6_only(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(backlog, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    throw ListenError("Could not create " + std::string(what) + " listening socket " + bind +
                          ":" + std::to_string(port) + ": " + ec.message(),
                      ec);
  }
  return acceptor.local_endpoint().port();
}

}  // namespace latch
