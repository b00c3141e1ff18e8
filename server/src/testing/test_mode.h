#pragma once
// latchd's start-up checks for test mode (enable-test-commands, clock manual).
#include <optional>
#include <string>

namespace latch {
struct Options;
}  // namespace latch

namespace latch::testing {

// Refuses test commands on a server reachable from other hosts: every bind address (and
// rest-bind, when the REST port is on) must be loopback. Then, for `clock manual`, installs a
// ManualClock starting at the current time. Returns the start-up error, nullopt when fine.
std::optional<std::string> PrepareTestMode(Options& options);

}  // namespace latch::testing
