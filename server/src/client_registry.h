#pragma once
// The connected clients: what CLIENT LIST / CLIENT INFO show of each connection, and the
// registry every connection adds itself to. Below the commands and the connections: pub/sub,
// ACL's log and INFO read it too.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace latch {

// What CLIENT LIST / CLIENT INFO show of a connection. The owning connection writes the
// plain fields under ClientRegistry::mu; others read them under it.
struct ClientInfo {
  std::int64_t id = 0;
  std::string addr;   // ip:port of the peer
  std::string laddr;  // ip:port of our side
  int fd = -1;
  std::int64_t created_ms = 0;  // monotonic
  bool unix_socket = false;     // came through unixsocket (CLIENT LIST flag U)
  // Parked by a blocking command (LOCK.ACQUIRE ... WAIT): CLIENT LIST flag b. Set and cleared
  // by the owning connection.
  std::atomic<bool> blocked{false};
  std::atomic<bool> monitor{false};  // ran MONITOR (CLIENT LIST flag O)
  // Set by a RESP connection at start (null for REST sessions), callable from any thread:
  // `kill` closes it (CLIENT KILL), `push` appends bytes to its output (MONITOR's feed). Both
  // post to the connection's own thread and do nothing once it is gone.
  std::function<void()> kill;
  std::function<void(std::string)> push;
  std::atomic<std::int64_t> last_interaction_ms{0};
  std::string name, lib_name, lib_ver;
  std::string user = "default";  // the ACL user (AUTH), for CLIENT LIST's user=
  std::atomic<const std::string*> last_cmd{nullptr};  // points into the command table
  std::atomic<int> proto{2};
  std::atomic<int> db{0};            // SELECT (CLIENT LIST db=)
  std::atomic<int> sub{0}, psub{0};  // channels and patterns subscribed (CLIENT LIST)
  // Buffer sizes for CLIENT LIST, stored (relaxed) by the owning connection after each
  // event: a snapshot, in Redis's field names.
  struct Buffers {
    std::atomic<std::size_t> qbuf{0}, qbuf_free{0}, rbs{0}, rbp{0};
    std::atomic<std::size_t> obl{0}, oll{0}, omem{0}, tot_mem{0};
  } buffers;
};

class ClientRegistry {
 public:
  // Returns nullptr when maxclients is reached.
  std::shared_ptr<ClientInfo> Add(int maxclients);
  void Remove(std::int64_t id);
  std::size_t count() const { return count_.load(); }
  template <class Fn>
  void ForEach(Fn&& fn) {
    std::lock_guard lock(mu);
    for (auto& [id, info] : clients_) fn(*info);
  }
  std::mutex mu;

 private:
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<std::size_t> count_{0};
  std::map<std::int64_t, std::shared_ptr<ClientInfo>> clients_;
};

}  // namespace latch
