#pragma once
// MONITOR: every command that runs (a client's, EXEC's queue, a script's redis.call as
// "[0 lua]"), after it ran, as Redis's line `+1700000000.123456 [0 127.0.0.1:5555] "SET" "k"
// "v"`, pushed to each monitoring connection (metrics/monitor_feed.h). Admin commands are not
// shown and passwords are redacted, as in Redis.
namespace latch {

struct CommandContext;
struct CommandSpec;
class MonitorFeed;

// Formats the command once and pushes it to the feed's monitors (called when active()).
void FeedMonitors(MonitorFeed& feed, const CommandSpec& spec, const CommandContext& ctx);

}  // namespace latch
