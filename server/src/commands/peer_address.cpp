#include "commands/peer_address.h"

#include <string>

namespace latch {

bool IsLoopbackPeer(const boost::asio::ip::address& ip) {
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, ip.to_v6()).is_loopback();
  }
  return ip.is_loopback();
}

bool IsLoopbackPeer(std::string_view ip_port) {
  // The port follows the last ':' (IPv6 addresses are written without brackets).
  const auto colon = ip_port.rfind(':');
  if (colon == std::string_view::npos) return false;
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(std::string(ip_port.substr(0, colon)), ec);
  return !ec && IsLoopbackPeer(ip);
}

}  // namespace latch
