#pragma once
// CONFIG SET of tls-* directives: Redis reloads the TLS context at once (new connections use
// it; connections already up keep theirs), and refuses the whole CONFIG SET when the new
// settings do not load. No Asio or OpenSSL here. The server installs it as
// ServerState::reload_tls, which CONFIG SET calls.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "latch/options.h"

namespace latch {

struct ServerState;

// `args` are CONFIG SET's name/value pairs, already applied to `updated`. When one of them
// is a tls-* directive and the TLS port is open, rebuilds the context from `updated`.
// Returns Redis's error reply when it does not load (the reason is logged); the context in
// use then stays and the caller keeps its old options.
std::optional<std::string> ReloadTlsForConfigSet(ServerState& server, const Options& updated,
                                                 std::span<const std::string_view> args);

}  // namespace latch
