// Embeds latch::Server on a free port and talks to it with latch::Client.
#include <iostream>

#include "latch/client.h"
#include "latch/lock.h"
#include "latch/server.h"
#include "latch/testing/scoped_server.h"

int main() {
  latch::Options options;
  options.port = 0;
  options.io_threads = 1;
  latch::Server server(options);
  const int port = server.start();
  auto client_options = latch::ClientOptions::FromUrl("redis://127.0.0.1:" + std::to_string(port));
  if (!client_options) return 2;
  latch::Client client(*client_options);
  latch::Lock lock(client);
  auto lease = lock.acquire_sync("embedded:lock", std::chrono::seconds(10));
  if (!lease || !lease->fencing_token) return 1;  // latchd hands out fencing tokens
  auto released = lock.release_sync(*lease);
  if (!released || *released != latch::LeaseStatus::kOk) return 1;
  server.stop();
  // The test kit links and runs without GoogleTest.
  latch::testing::ScopedServer kit;
  kit.Set("kit:key", "v", std::chrono::milliseconds(50));
  kit.Advance(std::chrono::milliseconds(50));
  if (kit.Exists("kit:key")) return 1;
  std::cout << "embedded ok\n";
  return 0;
}
