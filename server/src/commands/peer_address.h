#pragma once
// What the server can tell from a peer's "ip:port" text (ClientInfo::addr).
#include <string_view>

namespace latch {

// True when the peer's IP is a loopback address: 127.0.0.0/8, ::1, or an IPv4-mapped
// ::ffff:127.x.y.z. The address is parsed, not matched by prefix ("::1f:..." is not local).
// False for text that does not parse.
bool IsLoopbackPeer(std::string_view ip_port);

}  // namespace latch
