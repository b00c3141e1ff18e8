#pragma once
// Whether a peer is on the loopback interface (protected-mode, DEBUG and CONFIG SET's
// protected settings ask), from its socket address or its "ip:port" text (ClientInfo::addr).
#include <boost/asio/ip/address.hpp>
#include <string_view>

namespace latch {

// True for a loopback address: 127.0.0.0/8, ::1, or an IPv4-mapped ::ffff:127.x.y.z.
bool IsLoopbackPeer(const boost::asio::ip::address& ip);

// The same for "ip:port" text. The address is parsed, not matched by prefix ("::1f:..." is not
// local). False for text that does not parse.
bool IsLoopbackPeer(std::string_view ip_port);

}  // namespace latch
