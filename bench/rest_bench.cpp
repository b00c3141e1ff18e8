// The cost of HTTP: lock acquire/release cycles against latchd over RESP and over its
// Upstash-compatible REST endpoint, with the same commands, clients and keep-alive
// connections. Each client loops: SET lock:<client>:<n> <token> NX PX 30000, then the
// compare-and-delete release script of @upstash/lock (EVAL), one request at a time (no
// pipelining: a serverless function waits for each answer). Prints requests per second and
// the p50/p99 latency of one request.
//
//   rest_bench --port P --proto resp|rest [--clients 50] [--seconds 5] [--token T]
//
// One Asio thread drives every client (C++20 coroutines), so the load generator takes one core.
#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  int port = 0;
  bool rest = false;
  int clients = 50;
  int seconds = 5;
  std::string token = "bench";
};

// The release script of @upstash/lock 0.2.1 (latchd runs it natively).
const std::string kRelease =
    "\n      -- Check if the current UUID still holds the lock\n"
    "      if redis.call(\"get\", KEYS[1]) == ARGV[1] then\n"
    "        return redis.call(\"del\", KEYS[1])\n"
    "      else\n"
    "        return 0\n"
    "      end\n     ";

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

std::string Http(const Config& cfg, const std::vector<std::string>& args) {
  std::string body = "[";
  for (std::size_t i = 0; i < args.size(); ++i) body += (i ? "," : "") + JsonString(args[i]);
  body += "]";
  return "POST / HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + cfg.token +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

struct Totals {
  std::vector<std::uint32_t> latencies_us;
  std::uint64_t failures = 0;
};

// Reads one reply: a RESP line, or an HTTP response with its Content-Length body.
asio::awaitable<std::string> ReadReply(tcp::socket& s, std::string& buf, bool rest) {
  if (!rest) {
    const std::size_t n =
        co_await asio::async_read_until(s, asio::dynamic_buffer(buf), "\r\n", asio::use_awaitable);
    std::string line = buf.substr(0, n);
    buf.erase(0, n);
    co_return line;
  }
  const std::size_t head = co_await asio::async_read_until(s, asio::dynamic_buffer(buf), "\r\n\r\n",
                                                           asio::use_awaitable);
  const std::size_t cl = buf.find("Content-Length: ");
  const std::size_t length = std::strtoul(buf.c_str() + cl + 16, nullptr, 10);
  if (buf.size() < head + length) {
    co_await asio::async_read(s, asio::dynamic_buffer(buf),
                              asio::transfer_at_least(head + length - buf.size()),
                              asio::use_awaitable);
  }
  std::string body = buf.substr(head, length);
  buf.erase(0, head + length);
  co_return body;
}

asio::awaitable<void> Client(const Config& cfg, int id, Clock::time_point end, Totals& totals) {
  tcp::socket s(co_await asio::this_coro::executor);
  co_await s.async_connect(
      {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(cfg.port)},
      asio::use_awaitable);
  s.set_option(tcp::no_delay(true));
  std::string buf;
  const std::string token = "owner-" + std::to_string(1000000000000 + id);
  for (std::uint64_t n = 0; Clock::now() < end; ++n) {
    const std::string key = "lock:" + std::to_string(id) + ":" + std::to_string(n);
    const std::vector<std::string> acquire = {"SET", key, token, "NX", "PX", "30000"};
    const std::vector<std::string> release = {"EVAL", kRelease, "1", key, token};
    for (const auto* args : {&acquire, &release}) {
      const std::string request = cfg.rest ? Http(cfg, *args) : Resp(*args);
      const auto t0 = Clock::now();
      co_await asio::async_write(s, asio::buffer(request), asio::use_awaitable);
      const std::string reply = co_await ReadReply(s, buf, cfg.rest);
      totals.latencies_us.push_back(static_cast<std::uint32_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count()));
      const bool ok = cfg.rest ? (reply == R"({"result":"OK"})" || reply == R"({"result":1})")
                               : (reply == "+OK\r\n" || reply == ":1\r\n");
      if (!ok) ++totals.failures;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--port")
      cfg.port = std::atoi(value.c_str());
    else if (flag == "--proto")
      cfg.rest = value == "rest";
    else if (flag == "--clients")
      cfg.clients = std::atoi(value.c_str());
    else if (flag == "--seconds")
      cfg.seconds = std::atoi(value.c_str());
    else if (flag == "--token")
      cfg.token = value;
  }
  if (cfg.port <= 0) {
    std::cerr << "usage: rest_bench --port P --proto resp|rest [--clients 50] [--seconds 5] "
                 "[--token T]\n";
    return 2;
  }
  asio::io_context ctx(1);
  Totals totals;
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(cfg.seconds);
  for (int i = 0; i < cfg.clients; ++i) {
    asio::co_spawn(ctx, Client(cfg, i, end, totals), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
  ctx.run();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  auto& l = totals.latencies_us;
  std::sort(l.begin(), l.end());
  const auto pct = [&](double p) {
    return l.empty() ? 0u : l[static_cast<std::size_t>(p * (l.size() - 1))];
  };
  std::printf("%s clients=%d requests=%zu failures=%llu rps=%.0f p50_us=%u p99_us=%u\n",
              cfg.rest ? "rest" : "resp", cfg.clients, l.size(),
              static_cast<unsigned long long>(totals.failures), l.size() / elapsed, pct(0.50),
              pct(0.99));
  return totals.failures == 0 ? 0 : 1;
}
