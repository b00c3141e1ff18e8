#pragma once
// Drives a RequestParser the way a connection does and records what it returns, so one
// input can be fed whole, in two pieces or one byte at a time and the outcomes compared.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "latch/protocol/request_parser.h"

namespace latch::protocol::testing {

// One finished request, or the error that ended the stream.
struct Event {
  RequestParser::Result result;
  std::vector<std::string> args;  // copies of args() for kCommand
  std::size_t consumed = 0;       // consumed() for kCommand / kEmpty
  std::string error;              // error() for kError

  bool operator==(const Event&) const = default;
};

struct Outcome {
  std::vector<Event> events;
  std::size_t leftover = 0;      // bytes still pending when the input ran out
  std::size_t bytes_wanted = 0;  // bytes_wanted() after the last kNeedMore
  bool operator==(const Outcome&) const = default;
};

// Feeds `input` in pieces ending at each offset of `cuts` (ascending, the last one is
// input.size()). After each piece it parses until kNeedMore or kError, dropping consumed
// bytes as a connection does. With move_buffer, every Parse() call sees the pending bytes
// at a fresh address, which catches any pointer kept across calls (under ASan).
Outcome Feed(const ParserLimits& limits, std::string_view input,
             const std::vector<std::size_t>& cuts, bool move_buffer);

Outcome FeedWhole(const ParserLimits& limits, std::string_view input);
Outcome FeedSplitAt(const ParserLimits& limits, std::string_view input, std::size_t cut);
Outcome FeedBytewise(const ParserLimits& limits, std::string_view input);

// Helpers that build expected events.
Event Cmd(std::vector<std::string> args, std::size_t consumed);
Event Empty(std::size_t consumed);
Event Err(std::string text);

// Printable form of bytes for failure messages.
std::string Escape(std::string_view bytes);
std::string Describe(const Outcome& outcome);

}  // namespace latch::protocol::testing
