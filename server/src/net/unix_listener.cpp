#include "net/unix_listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

namespace latch {

void UnixListener::Open(const std::string& path, int perm, int backlog) {
  using boost::asio::local::stream_protocol;
  ::unlink(path.c_str());  // a stale file from a killed run; failure means there was none
  boost::system::error_code ec;
  acceptor_.open(stream_protocol(), ec);
  if (!ec) acceptor_.bind(stream_protocol::endpoint(path), ec);
  if (!ec) acceptor_.listen(backlog, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    throw std::runtime_error("Failed opening Unix socket: " + ec.message());
  }
  if (perm != 0) ::chmod(path.c_str(), static_cast<mode_t>(perm));
  path_ = path;
}

void UnixListener::Close() {
  if (!acceptor_.is_open()) return;
  boost::system::error_code ec;
  acceptor_.close(ec);
  ::unlink(path_.c_str());
}

}  // namespace latch
