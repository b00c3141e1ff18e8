#pragma once
// What a command handler sees: its arguments, the reply writer, the connection's session
// and the shared server state, plus one time snapshot taken before the handler runs.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "latch/clock.h"
#include "latch/protocol/reply_writer.h"
#include "server_state.h"

namespace latch {

// Per-connection state that commands read and change. Owned by the connection; only its
// worker thread touches it.
struct Session {
  std::shared_ptr<ClientInfo> info;
  int proto = 2;
  bool authenticated = true;
  bool close_after_reply = false;  // QUIT, protocol errors
};

struct CommandContext {
  std::span<const std::string_view> args;
  protocol::ReplyWriter& out;
  Session& session;
  ServerState& server;
  TimeSnapshot now;

  std::string_view arg(std::size_t i) const { return args[i]; }
  std::size_t argc() const { return args.size(); }
};

}  // namespace latch
