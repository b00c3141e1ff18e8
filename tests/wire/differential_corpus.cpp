#include "differential_corpus.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "latch/protocol/request_parser.h"
#include "latch/protocol/split_args.h"
#include "support/resp_frame.h"

namespace latch::test {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsAggregate(char type) { return type == '*' || type == '~' || type == '%' || type == '>'; }

}  // namespace

// Corpus lines use redis-cli's quoting, which is Redis's inline syntax: the protocol
// library's splitter (the one latchd uses for inline requests) reads them.
bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  return protocol::SplitArgs(line, out);
}

bool Unescape(std::string_view text, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      *out += text[i];
      continue;
    }
    if (++i >= text.size()) return false;
    switch (text[i]) {
      case 'r':
        *out += '\r';
        break;
      case 'n':
        *out += '\n';
        break;
      case 't':
        *out += '\t';
        break;
      case '\\':
        *out += '\\';
        break;
      case '"':
        *out += '"';
        break;
      case '0':
        *out += '\0';
        break;
      case 'x': {
        if (i + 2 >= text.size() || HexValue(text[i + 1]) < 0 || HexValue(text[i + 2]) < 0) {
          return false;
        }
        *out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
        i += 2;
        break;
      }
      case '{': {  // \{N}c: the character c repeated N times (large inputs on one line)
        std::size_t close = text.find('}', i);
        std::size_t count = 0;
        if (close == std::string_view::npos || close + 1 >= text.size()) return false;
        auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + close, count);
        if (ec != std::errc() || end != text.data() + close || count > (1u << 24)) return false;
        out->append(count, text[close + 1]);
        i = close + 1;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

bool ParseCorpus(std::string_view text, Corpus* corpus, std::string* error) {
  corpus->server_settings.clear();
  corpus->steps.clear();
  int line_no = 0;
  while (!text.empty()) {
    std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line.remove_prefix(first);

    CorpusStep step;
    step.line = line_no;
    step.text = std::string(line);
    auto fail = [&](const std::string& why) {
      *error = "line " + std::to_string(line_no) + ": " + why + ": " + step.text;
      return false;
    };
    if (line[0] == '!') {
      std::vector<std::string> words;
      if (!SplitArgs(line.substr(1), &words) || words.empty()) return fail("bad directive");
      if (words[0] == "advance" && words.size() == 2) {
        step.kind = CorpusStep::Kind::kAdvance;
        auto [end, ec] =
            std::from_chars(words[1].data(), words[1].data() + words[1].size(), step.advance_ms);
        if (ec != std::errc() || end != words[1].data() + words[1].size() || step.advance_ms < 0 ||
            step.advance_ms > 5000) {
          return fail("!advance takes milliseconds (0..5000)");
        }
      } else if (words[0] == "reconnect" && words.size() == 1) {
        step.kind = CorpusStep::Kind::kReconnect;
      } else if (words[0] == "server" && words.size() == 3) {
        if (!corpus->steps.empty()) return fail("!server must come before any step");
        corpus->server_settings.emplace_back(words[1], words[2]);
        continue;
      } else {
        return fail("unknown directive");
      }
      corpus->steps.push_back(std::move(step));
      continue;
    }
    if (line[0] == '>') {
      step.kind = CorpusStep::Kind::kRaw;
      std::string_view rest = line.substr(1);
      std::size_t digits = 0;
      while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
        ++digits;
      }
      if (digits > 0) std::from_chars(rest.data(), rest.data() + digits, step.replies);
      rest.remove_prefix(digits);
      if (rest.empty() || rest[0] != ' ') return fail("raw line: '>' [count] ' ' bytes");
      if (!Unescape(rest.substr(1), &step.raw)) return fail("bad escape in raw bytes");
      corpus->steps.push_back(std::move(step));
      continue;
    }
    if (line[0] == '~') {
      step.compare = CorpusStep::Compare::kType;
      line.remove_prefix(1);
    } else if (line[0] == '^') {
      step.compare = CorpusStep::Compare::kSorted;
      line.remove_prefix(1);
    }
    if (!SplitArgs(line, &step.args)) return fail("unbalanced quotes");
    if (step.args.empty()) return fail("no command");
    corpus->steps.push_back(std::move(step));
  }
  return true;
}

std::string SortAggregates(std::string_view reply) {
  if (reply.empty() || !IsAggregate(reply[0])) return std::string(reply);
  std::size_t eol = reply.find("\r\n");
  if (eol == std::string_view::npos) return std::string(reply);
  int count = 0;
  std::from_chars(reply.data() + 1, reply.data() + eol, count);
  if (reply[0] == '%') count *= 2;
  std::string_view rest = reply.substr(eol + 2);
  std::vector<std::string> children;
  bool all_scalars = true;
  for (int i = 0; i < count; ++i) {
    RespFrame frame = FrameReply(rest);
    if (frame.status != RespFrame::Status::kComplete) return std::string(reply);
    std::string_view child = rest.substr(0, frame.length);
    rest.remove_prefix(frame.length);
    if (IsAggregate(child[0])) all_scalars = false;
    children.push_back(SortAggregates(child));
  }
  // Maps keep their pairs together: sorting their flat elements would mix keys and values.
  if (all_scalars && reply[0] != '%') std::sort(children.begin(), children.end());
  std::string out(reply.substr(0, eol + 2));
  for (const std::string& child : children) out += child;
  out += rest;
  return out;
}

std::string Printable(std::string_view bytes) {
  constexpr std::size_t kMax = 600;
  std::string out;
  for (char c : bytes.substr(0, kMax)) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  if (bytes.size() > kMax) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace latch::test
