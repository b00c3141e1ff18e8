#pragma once
// A follower's REST request relayed to the Raft leader's REST endpoint (docs/CLUSTER.md,
// "REST on a follower"): one HTTP/1.1 exchange on a connection of its own, on the worker that
// holds the client's session. The request goes as the client sent it, its credential
// included, so the leader authenticates it and applies that user's permissions itself: the
// follower never runs the commands nor vouches for anyone. Bounded: a connect deadline, a
// deadline for the whole exchange, and a limit on the answer held here.
// No Beast in this header.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace latch::rest {

// The header that marks a relayed request: its receiver runs it itself (a node that is no
// longer the leader answers as a follower), so a request is relayed at most once.
inline constexpr char kRelayedHeader[] = "Latch-Relayed";

struct RelayedRequest {
  std::string method;  // HEAD is sent as GET: the follower counts the body itself
  std::string target;  // path and query as sent (a ?_token= credential included)
  std::string authorization;
  std::string encoding;       // Upstash-Encoding
  std::string telemetry_sdk;  // Upstash-Telemetry-Sdk
  std::string body;
};

struct RelayedAnswer {
  enum class Outcome {
    kAnswered,  // the leader's status and body
    kNotSent,   // no connection to the leader: nothing ran there
    kLost,      // sent, but no whole answer came (the leader died, stepped down, too slow,
                // or its answer is over the limit): the outcome is unknown
  };
  Outcome outcome = Outcome::kNotSent;
  int status = 0;
  std::string body;
  std::string error;  // why, when not kAnswered
};

struct RelayLimits {
  std::chrono::milliseconds connect{5000};
  std::chrono::milliseconds exchange{60000};  // from the connect to the answer's last byte
  std::size_t answer_bytes = 64 * 1024 * 1024;
};

// Sends `request` to host:port and calls `done` once, on `io`, with the outcome.
void RelayToLeader(boost::asio::io_context& io, const std::string& host, int port,
                   RelayedRequest request, const RelayLimits& limits,
                   std::function<void(RelayedAnswer)> done);

}  // namespace latch::rest
