#include "net/tls_config_set.h"

#include <spdlog/logger.h>

#include "config/config_values.h"
#include "latch/protocol/error_arg.h"
#include "net/tls_context.h"
#include "server_state.h"

namespace latch {

std::optional<std::string> ReloadTlsForConfigSet(ServerState& server, const Options& updated,
                                                 std::span<const std::string_view> args) {
  if (!server.tls) return std::nullopt;  // no TLS port: the values wait for the next start
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i].size() < 4 || !config::EqualsIgnoreCase(args[i].substr(0, 4), "tls-")) continue;
    std::string error;
    if (server.tls->Reload(updated, &error)) {
      server.log->info("TLS configuration reloaded (CONFIG SET {})", args[i]);
      return std::nullopt;
    }
    server.log->warn("{}", error);
    return "ERR CONFIG SET failed (possibly related to argument '" +
           std::string(protocol::ErrorArg(args[i])) +
           "') - Unable to update TLS configuration. Check server logs.";
  }
  return std::nullopt;
}

}  // namespace latch
