#include "protocol/request_parser_harness.h"

#include <cstdio>
#include <memory>

namespace latch::protocol::testing {

Outcome Feed(const ParserLimits& limits, std::string_view input,
             const std::vector<std::size_t>& cuts, bool move_buffer) {
  RequestParser parser(limits);
  Outcome out;
  std::string pending;
  std::size_t fed = 0;
  for (std::size_t cut : cuts) {
    pending.append(input.substr(fed, cut - fed));
    fed = cut;
    // Bounded: every iteration either consumes at least one byte or stops.
    for (std::size_t guard = 0; guard <= input.size(); ++guard) {
      std::string_view view = pending;
      std::unique_ptr<char[]> moved;
      if (move_buffer) {
        moved = std::make_unique<char[]>(pending.size() + 1);
        pending.copy(moved.get(), pending.size());
        view = std::string_view(moved.get(), pending.size());
      }
      const RequestParser::Result result = parser.Parse(view);
      if (result == RequestParser::Result::kNeedMore) {
        out.bytes_wanted = parser.bytes_wanted();
        break;
      }
      Event event{result, {}, 0, {}};
      if (result == RequestParser::Result::kError) {
        event.error = parser.error();
        out.events.push_back(std::move(event));
        out.leftover = pending.size() + (input.size() - fed);
        out.bytes_wanted = 0;
        return out;
      }
      event.consumed = parser.consumed();
      for (std::string_view arg : parser.args()) event.args.emplace_back(arg);
      out.events.push_back(std::move(event));
      if (parser.consumed() == 0 || parser.consumed() > pending.size()) {
        out.events.push_back({RequestParser::Result::kError, {}, 0, "bad consumed()"});
        return out;
      }
      pending.erase(0, parser.consumed());
    }
  }
  out.leftover = pending.size();
  return out;
}

Outcome FeedWhole(const ParserLimits& limits, std::string_view input) {
  return Feed(limits, input, {input.size()}, /*move_buffer=*/true);
}

Outcome FeedSplitAt(const ParserLimits& limits, std::string_view input, std::size_t cut) {
  return Feed(limits, input, {cut, input.size()}, /*move_buffer=*/input.size() < 4096);
}

Outcome FeedBytewise(const ParserLimits& limits, std::string_view input) {
  std::vector<std::size_t> cuts;
  cuts.reserve(input.size() + 1);
  for (std::size_t i = 1; i <= input.size(); ++i) cuts.push_back(i);
  if (cuts.empty()) cuts.push_back(0);
  return Feed(limits, input, cuts, /*move_buffer=*/input.size() < 4096);
}

Event Cmd(std::vector<std::string> args, std::size_t consumed) {
  return {RequestParser::Result::kCommand, std::move(args), consumed, {}};
}
Event Empty(std::size_t consumed) { return {RequestParser::Result::kEmpty, {}, consumed, {}}; }
Event Err(std::string text) { return {RequestParser::Result::kError, {}, 0, std::move(text)}; }

std::string Escape(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string Describe(const Outcome& outcome) {
  static constexpr const char* kNames[] = {"NeedMore", "Command", "Empty", "Error"};
  std::string out;
  for (const Event& e : outcome.events) {
    out += kNames[static_cast<int>(e.result)];
    for (const std::string& arg : e.args) out += " [" + Escape(arg) + "]";
    if (e.result == RequestParser::Result::kError) out += " \"" + Escape(e.error) + "\"";
    out += " consumed=" + std::to_string(e.consumed) + "; ";
  }
  out += "leftover=" + std::to_string(outcome.leftover) +
         " wanted=" + std::to_string(outcome.bytes_wanted);
  return out;
}

}  // namespace latch::protocol::testing
