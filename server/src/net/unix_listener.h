#pragma once
// The `unixsocket` listener: a Unix stream socket beside the TCP ones, as redis-server offers
// (redis-cli -s PATH). Included only by server.cpp (it pulls in Asio).
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <string>

namespace latch {

class UnixListener {
 public:
  explicit UnixListener(boost::asio::io_context& ctx) : acceptor_(ctx) {}

  // Removes a file left at `path` by an earlier run (Redis does the same: a stale socket file
  // would make bind fail), binds, listens and, when `perm` is non-zero, chmods the file.
  // Throws std::runtime_error with Redis's "Failed opening Unix socket" reason.
  void Open(const std::string& path, int perm, int backlog);
  // Closes the socket and removes its file, as Redis does at shutdown. Acceptor thread only.
  void Close();
  bool is_open() const { return acceptor_.is_open(); }
  const std::string& path() const { return path_; }
  boost::asio::local::stream_protocol::acceptor& acceptor() { return acceptor_; }

 private:
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::string path_;
};

}  // namespace latch
