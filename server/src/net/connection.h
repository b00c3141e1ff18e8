#pragma once
// One client socket, pinned to one worker for its whole life. Reads a batch, parses and
// runs every complete request in it, then writes all their replies at once; it does not
// read again until that write completes, which bounds a pipelining client's pending output
// to one batch's replies. Included only by net/ sources.
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/context.h"
#include "latch/protocol/request_parser.h"
#include "server_state.h"

namespace latch {

class Worker;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, ServerState& state, Worker& worker,
             std::shared_ptr<ClientInfo> info);
  ~Connection();

  void Start();
  // Closes the socket; pending handlers finish with an error. Worker thread only.
  void Close();
  // Worker thread only: closes the connection when it has been idle longer than timeout_s.
  void CloseIfIdle(std::int64_t now_ms, int timeout_s);

 private:
  void DoRead();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  // Parses and runs every complete request in the buffer. Returns false when the
  // connection must close once the pending output is written.
  void ProcessInput();
  void Execute(std::span<const std::string_view> args);
  void DoWrite();
  void UpdateParserLimits();

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
  bool parser_authenticated_ = true;
};

}  // namespace latch
