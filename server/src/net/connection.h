#pragma once
// One client socket, pinned to one worker for its whole life.
//
// Flow: read a batch, run every complete request in it, write all their replies at once,
// and read again only when that write has completed: a pipelining client's pending output
// is bounded by one batch's replies (backpressure). A client parked by a blocking command
// keeps reading (to notice a disconnect, buffering further requests up to
// client-query-buffer-limit) but runs nothing until it is unparked. Included only by net/.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/context.h"
#include "latch/protocol/request_parser.h"
#include "server_state.h"

namespace latch {

class Worker;

class Connection : public std::enable_shared_from_this<Connection>, public BlockHost {
 public:
  Connection(boost::asio::ip::tcp::socket socket, ServerState& state, Worker& worker,
             std::shared_ptr<ClientInfo> info);
  ~Connection() override;

  void Start();
  // Closes the socket; pending handlers finish with an error. Worker thread only.
  void Close();
  // Worker thread only: closes the connection when it has been idle longer than timeout_s.
  void CloseIfIdle(std::int64_t now_ms, int timeout_s);

  std::shared_ptr<BlockedClient> Block(std::int64_t timeout_ms) override;

 private:
  // Decides the next step after any event: run buffered requests, write, read or close.
  void Pump();
  void StartRead();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void StartWrite();
  void ProcessInput();
  void Execute(std::span<const std::string_view> args);
  void UpdateParserLimits();
  void Unblock(const BlockedClient::Writer& write);
  // appendfsync always: true when the replies wait for journal record journal_seq_; StartWrite
  // runs again once it is on disk (journal/server_hooks.h).
  bool HoldForJournal();

  boost::asio::ip::tcp::socket socket_;
  ServerState& state_;
  Worker& worker_;
  Session session_;
  protocol::RequestParser parser_;
  protocol::ReplyWriter writer_;
  std::vector<char> rbuf_;
  std::size_t rstart_ = 0, rend_ = 0;
  std::string out_;
  bool closed_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool parser_authenticated_ = true;
  TimeSnapshot now_{};       // taken when the last read completed
  bool fresh_now_ = false;   // now_ not yet used by a command
  std::uint64_t journal_seq_ = 0;  // the last journal record the pending replies depend on
  std::shared_ptr<BlockedClient> blocked_;
  boost::asio::steady_timer block_timer_;
};

}  // namespace latch
