#pragma once
// protected-mode, as Redis 7: while it is on and no password is set, a client that is not on
// the loopback interface (IsLoopbackPeer, commands/peer_address.h) is sent
// kProtectedModeDenied and closed (whatever `bind` says).
#include <string_view>

namespace latch {

// redis-server 7.0.15's text, byte for byte (its "Setup a an" included), with CRLF.
inline constexpr std::string_view kProtectedModeDenied =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to "
    "do one of the above things in order for the server to start accepting connections from the "
    "outside.\r\n";

}  // namespace latch
