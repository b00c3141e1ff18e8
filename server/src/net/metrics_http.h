#pragma once
// Prometheus /metrics over HTTP/1.1 (Boost.Beast) on its own small thread and port
// (`metrics-port`), so that a scrape never waits behind client traffic on a worker and the
// workers never see HTTP. Beast stays inside metrics_http.cpp.
#include <memory>
#include <string>

namespace latch {

struct ServerState;

class MetricsHttp {
 public:
  explicit MetricsHttp(ServerState& state);
  ~MetricsHttp();  // stops if running
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // Binds bind:port (port 0: any free port) and starts serving; returns the bound port.
  // Throws std::runtime_error when the address cannot be bound.
  int Start(const std::string& bind, int port);
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace latch
