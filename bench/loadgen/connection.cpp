#include "connection.h"

namespace latch::bench {

asio::awaitable<std::error_code> Connection::Connect(const std::string& host, int port) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) co_return std::make_error_code(std::errc::invalid_argument);
  auto [cec] = co_await socket_.async_connect(
      asio::ip::tcp::endpoint(addr, static_cast<unsigned short>(port)),
      asio::as_tuple(asio::use_awaitable));
  if (cec) co_return std::make_error_code(std::errc::connection_refused);
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  co_return std::error_code();
}

}  // namespace latch::bench
