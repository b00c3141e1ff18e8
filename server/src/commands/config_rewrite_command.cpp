// CONFIG REWRITE (config/config_rewrite.h): the file latchd was started with.
#include <spdlog/logger.h>

#include <mutex>

#include "commands/command_table.h"
#include "config/config_rewrite.h"

namespace latch {
namespace {
void ConfigRewriteCommand(CommandContext& ctx) {
  Options current;
  {
    std::lock_guard lock(ctx.server.options_mu);
    current = ctx.server.options;
  }
  if (current.config_file.empty()) {
    return ctx.out.Error("ERR The server is running without a config file");
  }
  if (auto reason = config::RewriteConfigFile(current.config_file, current)) {
    ctx.server.log->warn("CONFIG REWRITE failed: {}", *reason);
    return ctx.out.Error("ERR Rewriting config file: " + *reason);
  }
  ctx.server.log->info("CONFIG REWRITE executed with success.");
  ctx.out.Ok();
}
}  // namespace

void AddConfigRewriteSubcommand(CommandSpec& config) {
  config.subcommands.push_back(
      CommandSpec{.name = "config|rewrite",
                  .arity = 2,
                  .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                  .handler = ConfigRewriteCommand,
                  .group = "server",
                  .summary = "Persists the effective configuration to file.",
                  .since = "2.8.0"});
}

}  // namespace latch
