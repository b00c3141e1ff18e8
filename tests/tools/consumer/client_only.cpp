// Takes and releases a lock on the server named by argv[1] (redis://host:port).
#include <iostream>

#include "latch/client.h"
#include "latch/lock.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto options = latch::ClientOptions::FromUrl(argv[1]);
  if (!options) return 2;
  latch::Client client(*options);
  latch::Lock lock(client);
  auto lease = lock.acquire_sync("consumer:lock", std::chrono::seconds(10));
  if (!lease) return 1;
  auto released = lock.release_sync(*lease);
  if (!released || *released != latch::LeaseStatus::kOk) return 1;
  std::cout << "client ok\n";
  return 0;
}
