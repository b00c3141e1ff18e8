#pragma once
// A follower's relay of one client session to the Raft leader (docs/CLUSTER.md,
// "Forwarding"): the link to the leader's client port that a Connection opens at the first
// command that needs the leader, and the replay of the session state the client set on this
// node before (AUTH, HELLO 3, CLIENT SETNAME, SELECT). After the replay, the client's bytes
// go to the leader and the leader's bytes to the client unchanged: the replies are exactly
// the leader's (RESP3 pushes, blocking waits and pipelines included). The Connection drives
// it on its own io_context (net/connection_relay.cpp). Included only by net/.
#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "latch/protocol/reply_reader.h"

namespace latch {

struct RelayLink {
  explicit RelayLink(boost::asio::io_context& ctx) : socket(ctx), resolver(ctx) {}

  // Replies to the replay, which the client did not ask for: takes them off the front of
  // `*data` (bytes just read from the leader) while any are due, leaving the client's part.
  // False, with the reason in *error, when one is an error (the leader refused the session:
  // another password, an ACL that differs) or the stream is malformed.
  bool SkipReplayReplies(std::string_view* data, std::string* error);

  std::uint64_t leader_id = 0;  // the leader the session lives on; another one ends it
  boost::asio::ip::tcp::socket socket;
  boost::asio::ip::tcp::resolver resolver;  // a leader given by host name
  bool connected = false;
  bool sending = false;      // a write to the leader is under way
  bool receiving = false;    // a read from the leader is under way
  bool leader_gone = false;  // the link ended: close the client once what came is written
  std::string replay;        // sent before the client's bytes; cleared once written
  int replay_replies = 0;    // replies to `replay` not yet taken off the leader's stream
  protocol::ReplyReader replay_reader;  // finds where they end
  std::array<char, 16 * 1024> received{};
};

// The AUTH command that logs the relay in as `args` (an AUTH or a HELLO ... AUTH that
// succeeded) logged the client in; empty for a HELLO without AUTH.
std::string RelayLoginCommand(std::span<const std::string_view> args);
// The commands that give the leader's session the state the client set here: `login`
// (RelayLoginCommand's), HELLO 3, CLIENT SETNAME, SELECT; *replies: how many they are.
std::string RelaySessionReplay(const std::string& login, int proto, const std::string& name, int db,
                               int* replies);

}  // namespace latch
