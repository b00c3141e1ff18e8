#pragma once
// The per-connection state commands read and change (CommandContext::session).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acl/session_acl.h"
#include "client_registry.h"
#include "watch_registry.h"

namespace latch {

namespace pubsub {
class Subscriber;
}  // namespace pubsub

// Owned by the connection (or REST session, or script thread); only its thread touches it.
struct Session {
  std::shared_ptr<ClientInfo> info;
  int proto = 2;
  bool authenticated = true;
  acl::SessionAcl acl;             // the ACL user (commands/acl_gate.h)
  bool close_after_reply = false;  // QUIT, protocol errors
  int db = 0;                      // SELECT: index into ServerState::dbs

  // MULTI/EXEC/WATCH (see transaction_commands.cpp).
  bool in_multi = false;
  bool multi_error = false;                      // a command was rejected while queuing
  std::vector<std::vector<std::string>> queued;  // owned copies of the queued commands
  std::unique_ptr<WatchRegistry::Watcher> watcher;
  std::vector<std::string> watched_keys;
  std::vector<int> watched_dbs;       // per watched key: its database
  std::vector<char> watched_existed;  // per watched key: live when WATCH ran

  // Pub/sub (commands/client_subscriptions.h): channels plus patterns subscribed (non-zero:
  // subscriber mode), the mailbox publishers push into, and how the connection is told to
  // drain it (any thread; empty where a client cannot receive pushes, e.g. REST).
  int subscriptions = 0;
  std::shared_ptr<pubsub::Subscriber> subscriber;
  std::function<void()> push_wake;
};

}  // namespace latch
