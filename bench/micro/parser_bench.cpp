// Micro-benchmark of protocol::RequestParser on what a lock client pipelines: a buffer of
// `SET lock:<12 digits> <22-byte token> NX PX 30000` requests, parsed one after the other the
// way a connection walks its read buffer. Reports time and bytes per request.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "latch/protocol/request_parser.h"

namespace {

using latch::protocol::RequestParser;

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// `n` SET NX PX requests in RESP, as redis-benchmark or a client library sends them.
std::string PipelinedSets(int n) {
  std::string out;
  char key[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(key, sizeof key, "lock:%012d", i * 7919 % 100'000);
    out += "*6\r\n" + Bulk("SET") + Bulk(key) + Bulk("owner-0000000000000042") + Bulk("NX") +
           Bulk("PX") + Bulk("30000");
  }
  return out;
}

void BM_ParsePipelinedSetNxPx(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string buf = PipelinedSets(n);
  RequestParser parser;
  std::size_t args = 0;
  for (auto _ : state) {
    std::size_t off = 0;
    // Bounded: each kCommand consumes at least one byte of a buffer of finite size.
    while (off < buf.size()) {
      if (parser.Parse(std::string_view(buf).substr(off)) != RequestParser::Result::kCommand) {
        state.SkipWithError("parser did not return a command");
        break;
      }
      args += parser.args().size();
      off += parser.consumed();
    }
  }
  benchmark::DoNotOptimize(args);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buf.size()));
}
BENCHMARK(BM_ParsePipelinedSetNxPx)->Arg(16)->Arg(1000);

// The same requests arriving in 1460-byte pieces (one TCP segment each): the resumable path,
// which must not rescan what it has already seen.
void BM_ParseSegmented(benchmark::State& state) {
  const std::string buf = PipelinedSets(1000);
  constexpr std::size_t kSegment = 1460;
  RequestParser parser;
  for (auto _ : state) {
    std::size_t start = 0;  // first byte of the request being parsed
    std::size_t avail = std::min(kSegment, buf.size());
    // Bounded: every pass consumes a request or makes `avail` grow, up to buf.size().
    while (start < buf.size()) {
      auto r = parser.Parse(std::string_view(buf).substr(start, avail - start));
      if (r == RequestParser::Result::kCommand) {
        start += parser.consumed();
      } else if (r == RequestParser::Result::kNeedMore && avail < buf.size()) {
        avail = std::min(avail + kSegment, buf.size());
      } else {
        state.SkipWithError("unexpected parser result");
        break;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_ParseSegmented);

}  // namespace
