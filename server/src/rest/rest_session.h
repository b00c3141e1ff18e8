#pragma once
// One HTTP/1.1 connection of the REST endpoint, on its worker's io_context (Boost.Beast for
// reading requests): read a header, check its framing and credentials, read the body within
// the limits, route it (rest_routes.h), write the answer, and read the next request on the
// same connection (keep-alive) until the client closes it or it stays idle too long.
//
// Answers (rest_answer.cpp) are written as they are produced: a request's commands run a
// step at a time (CommandJob) while less than kRunAhead of its answer is unwritten, so the
// answer goes out at the pace the client reads it and the server never holds it whole. An
// answer complete before its first write has a Content-Length; a longer one is chunked
// (HTTP/1.0: ends with the connection). client-output-buffer-limit normal closes the
// client when its unwritten answer (a command's reply included) reaches the hard limit, or
// stays over the soft limit too long, as Redis closes a RESP client.
// Included by rest_session.cpp and rest_answer.cpp only.
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "net/output_limit.h"
#include "rest/command_runner.h"
#include "rest/leader_proxy.h"
#include "rest/rest_endpoint.h"
#include "rest/rest_routes.h"

namespace latch::rest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

class RestSession;
struct SessionSet::Registry {
  std::unordered_set<RestSession*> sessions;
};

class RestSession : public std::enable_shared_from_this<RestSession> {
 public:
  RestSession(tcp::socket socket, ServerState& state, asio::io_context& context,
              SessionSet::Registry& registry, std::shared_ptr<ClientInfo> info);
  ~RestSession();

  void Start();
  void Close();

 private:
  // Reading (rest_session.cpp).
  std::chrono::seconds IdleTimeout() const;
  void ReadHeader();
  void OnHeader(beast::error_code ec, std::size_t n);
  void WriteContinue();
  void ReadBody();
  void OnReadError(beast::error_code ec);
  void Handle();
  // On a Raft follower that knows the leader's REST endpoint, a request with a command that
  // needs the leader is relayed there (rest/leader_proxy.h) instead of run: true then, and
  // the answer is the leader's (OnRelayed).
  bool MaybeRelay(const RouteResult& routed, bool close);
  void OnRelayed(RelayedAnswer answer, bool close);

  // Answering (rest_answer.cpp).
  // Starts the answer to the request just read (or refused before its body: `close`).
  void Respond(RouteResult result, bool close);
  // Runs the job's next steps until the answer is complete, kRunAhead of it is unwritten
  // (resumed as writes complete) or the pass yields to the worker's other clients.
  void Produce();
  // What a step's result does to the answer, wherever the step ran (its part already in
  // pending_): closes the connection (false) on kClosed, kOverLimit or the output limit.
  bool TakeStep(CommandJob::Step step, int status);
  // Runs the job's next step on the script thread (CommandJob::NextRunsScript): the job
  // travels there and back while the worker serves its other clients.
  void RunStepOnScriptThread(std::size_t budget);
  struct ScriptStep;
  void OnScriptStep(ScriptStep& step);
  // Writes what is pending (the response head first), unless a write is under way.
  void MaybeWrite();
  void OnWritten(beast::error_code ec, std::size_t n);
  // The answer is written: the next request, or the close it asked for.
  void Finish();
  std::string ResponseHead(std::size_t content_length) const;
  std::size_t PendingOutput() const { return pending_.size() + (writing_ ? sending_.size() : 0); }
  // client-output-buffer-limit normal: logs and closes the client when it is over; true then.
  bool CloseIfOverOutputLimit();
  void CloseForOutputLimit();
  // CLIENT LIST's omem, obl, oll and tot-mem for this client.
  void PublishBufferSizes();

  beast::tcp_stream stream_;
  ServerState& state_;
  asio::io_context& context_;
  SessionSet::Registry& registry_;
  std::shared_ptr<ClientInfo> info_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::shared_ptr<const acl::User> user_;  // of the request being read (rest_auth.h)
  bool authorized_ = false;
  bool closed_ = false;

  // The answer being produced and written.
  struct Answer {
    int status = 200;
    std::string allow;
    unsigned version = 11;
    bool close = false;               // Connection: close, and closed once written
    bool head = false;                // HEAD: the GET's headers, its body counted, not sent
    std::unique_ptr<CommandJob> job;  // null once the body is complete in pending_
    bool head_sent = false;
    bool chunked = false;
    bool final_sent = false;  // the last chunk, or the whole body
    std::size_t counted = 0;  // HEAD: the body's length so far
  };
  std::optional<Answer> answer_;
  std::string pending_;          // answer bytes not yet handed to a write
  std::string sending_;          // the body part of the write under way
  std::string prefix_, suffix_;  // the write's head and chunk framing around sending_
  bool writing_ = false;
  bool produce_posted_ = false;    // a yielded Produce() is queued on the worker
  bool script_step_ = false;       // the answer's job is away on the script thread
  std::uint64_t journal_seq_ = 0;  // the journal record the unwritten answer depends on
  OutputLimitTracker output_limit_;
};

}  // namespace latch::rest
