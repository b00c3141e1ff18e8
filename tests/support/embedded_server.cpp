#include "support/embedded_server.h"

#include <utility>

#include "support/io_engine.h"

namespace latch::test {

Options EmbeddedServer::DefaultOptions() {
  Options options;
  options.io_threads = 2;
  options.shards = 4;
  options.loglevel = "warning";
  return options;
}

std::int64_t EmbeddedServer::NowWallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

EmbeddedServer::EmbeddedServer(Options options, std::int64_t wall_ms)
    : clock_(std::make_shared<ManualClock>(wall_ms)) {
  options.port = 0;
  options.bind = "127.0.0.1";
  options.clock = clock_;
  ApplyTestIoEngine(options);
  server_ = std::make_unique<Server>(std::move(options));
  port_ = server_->start();
}

EmbeddedServer::~EmbeddedServer() {
  if (server_) server_->stop();
}

}  // namespace latch::test
