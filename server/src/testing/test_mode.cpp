#include "testing/test_mode.h"

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <memory>

#include "config/config_directives.h"
#include "latch/clock.h"
#include "latch/options.h"

namespace latch::testing {
namespace {

// The first address of `bind` that is not loopback ("*" and "::*" are not), or nullopt.
std::optional<std::string> NonLoopback(const std::string& bind) {
  for (const config::BindAddress& a : config::SplitBindAddresses(bind)) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(config::ListenAddress(a), ec);
    if (ec || !address.is_loopback()) return a.address;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> PrepareTestMode(Options& options) {
  if (options.enable_test_commands) {
    std::optional<std::string> open = NonLoopback(options.bind);
    if (!open && options.rest_port > 0 && !options.rest_bind.empty()) {
      open = NonLoopback(options.rest_bind);
    }
    if (open) {
      return "enable-test-commands yes is refused: bind address '" + *open +
             "' is not loopback (test commands can move the clock and fail commands; bind "
             "127.0.0.1 or ::1 only)";
    }
  }
  if (options.clock_source == "manual" && !options.clock) {
    const auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    options.clock = std::make_shared<ManualClock>(wall.count());
  }
  return std::nullopt;
}

}  // namespace latch::testing
