// libFuzzer target: parses the input whole, then in random pieces and (for small inputs)
// one byte at a time, and aborts unless all agree on every command, error and consumed
// byte. Sanitizers catch reads outside the buffer and pointers kept across calls.
//
// Input layout: byte 0 picks the limits (bit 0: unauthenticated, bit 1: max bulk len 64),
// bytes 1..8 seed the split positions, the rest is the request stream.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

#include "protocol/request_parser_harness.h"

using latch::protocol::ParserLimits;
using latch::protocol::testing::Describe;
using latch::protocol::testing::Feed;
using latch::protocol::testing::FeedBytewise;
using latch::protocol::testing::FeedWhole;
using latch::protocol::testing::Outcome;

namespace {

constexpr std::size_t kHeader = 9;

void Agree(const Outcome& whole, const Outcome& other, const char* how) {
  if (whole == other) return;
  std::fprintf(stderr, "whole:    %s\n%s: %s\n", Describe(whole).c_str(), how,
               Describe(other).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  ParserLimits limits;
  limits.authenticated = (data[0] & 1) == 0;
  if ((data[0] & 2) != 0) limits.max_bulk_len = 64;
  std::uint64_t seed = 0;
  for (std::size_t i = 1; i < kHeader; ++i) seed = seed << 8 | data[i];
  const std::string_view input(reinterpret_cast<const char*>(data) + kHeader, size - kHeader);

  const Outcome whole = FeedWhole(limits, input);
  // Past 64 KiB Redis itself answers differently depending on how reads split a line.
  if (input.size() > latch::protocol::kInlineMaxSize) return 0;

  std::mt19937_64 rng(seed);
  for (int round = 0; round < 4; ++round) {
    std::vector<std::size_t> cuts;
    std::size_t at = 0;
    while (at < input.size()) {
      at += 1 + rng() % (round == 0 ? 4 : 64);
      if (at > input.size()) at = input.size();
      cuts.push_back(at);
    }
    if (cuts.empty()) cuts.push_back(0);
    Agree(whole, Feed(limits, input, cuts, /*move_buffer=*/true), "random pieces");
  }
  if (input.size() <= 512) Agree(whole, FeedBytewise(limits, input), "bytewise");
  return 0;
}
