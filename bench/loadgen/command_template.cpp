#include "command_template.h"

#include <cstdio>

namespace latch::bench {
namespace {

void AppendPadded(std::uint64_t v, std::string* out) {
  char digits[24];
  int n = std::snprintf(digits, sizeof digits, "%012llu", static_cast<unsigned long long>(v));
  out->append(digits, static_cast<std::size_t>(n));
}

}  // namespace

CommandTemplate::CommandTemplate(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos == text.size()) break;
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view arg = text.substr(pos, end - pos);
    std::vector<Piece> pieces;
    std::size_t p = 0;
    while (p < arg.size()) {
      Kind kind = Kind::kText;
      if (arg.size() - p >= 3 && arg[p] == '{' && arg[p + 2] == '}') {
        switch (arg[p + 1]) {
          case 'r': kind = Kind::kR; break;
          case 'i': kind = Kind::kI; break;
          case 'k': kind = Kind::kK; break;
          case 'o': kind = Kind::kO; break;
          default: break;
        }
      }
      if (kind != Kind::kText) {
        pieces.push_back({kind, {}});
        p += 3;
        continue;
      }
      if (pieces.empty() || pieces.back().kind != Kind::kText) pieces.push_back({Kind::kText, {}});
      pieces.back().text.push_back(arg[p++]);
    }
    args_.push_back(std::move(pieces));
    pos = end;
  }
}

void CommandTemplate::AppendTo(const TemplateVars& vars, std::string* out) const {
  out->append("*").append(std::to_string(args_.size())).append("\r\n");
  std::string arg;
  for (const auto& pieces : args_) {
    arg.clear();
    for (const Piece& piece : pieces) {
      switch (piece.kind) {
        case Kind::kText: arg.append(piece.text); break;
        case Kind::kR: AppendPadded(vars.r, &arg); break;
        case Kind::kI: AppendPadded(vars.i, &arg); break;
        case Kind::kK: arg.append(vars.k); break;
        case Kind::kO: arg.append(vars.o); break;
      }
    }
    out->append("$").append(std::to_string(arg.size())).append("\r\n").append(arg).append("\r\n");
  }
}

std::string OwnerToken(int client) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "owner-%016d", client);  // 6 + 16 = 22 bytes
  return buf;
}

}  // namespace latch::bench
