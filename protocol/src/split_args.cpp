// Redis's sdssplitargs(), for inline requests and config-file lines alike.
#include "latch/protocol/split_args.h"

#include <cstdio>
#include <cstring>

namespace latch::protocol {
namespace {

// isspace() in the C locale.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  // sdssplitargs works on a C string: a NUL ends the line.
  if (const void* nul = std::memchr(line.data(), '\0', line.size()); nul != nullptr) {
    line = line.substr(0, static_cast<const char*>(nul) - line.data());
  }
  const std::size_t n = line.size();
  auto at = [&](std::size_t i) { return i < n ? line[i] : '\0'; };
  std::size_t count = 0;  // tokens written; earlier strings in *out are reused in place
  std::size_t i = 0;
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i == n) break;
    if (count == out->size()) out->emplace_back();
    std::string& token = (*out)[count++];
    token.clear();
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      const char c = at(i);
      if (in_double) {
        if (c == '\\' && at(i + 1) == 'x' && IsHexDigit(at(i + 2)) && IsHexDigit(at(i + 3))) {
          token += static_cast<char>(HexValue(at(i + 2)) * 16 + HexValue(at(i + 3)));
          i += 3;
        } else if (c == '\\' && at(i + 1) != '\0') {
          ++i;
          switch (line[i]) {
            case 'n':
              token += '\n';
              break;
            case 'r':
              token += '\r';
              break;
            case 't':
              token += '\t';
              break;
            case 'b':
              token += '\b';
              break;
            case 'a':
              token += '\a';
              break;
            default:
              token += line[i];
              break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) break;
          done = true;
        } else if (c == '\0') {
          break;  // unterminated quotes
        } else {
          token += c;
        }
      } else if (in_single) {
        if (c == '\\' && at(i + 1) == '\'') {
          ++i;
          token += '\'';
        } else if (c == '\'') {
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) break;
          done = true;
        } else if (c == '\0') {
          break;
        } else {
          token += c;
        }
      } else {
        // Unquoted: only these end a token (not '\v' or '\f', which isspace() skips
        // between tokens); a quote opens quoting in the middle of a token.
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            token += c;
            break;
        }
      }
      if (i < n) ++i;
    }
    if (!done) {
      out->clear();
      return false;
    }
  }
  out->resize(count);
  return true;
}

void AppendQuotedArg(std::string* out, std::string_view arg) {
  out->push_back('"');
  for (unsigned char c : arg) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out->push_back(static_cast<char>(c));
        } else {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", c);
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

}  // namespace latch::protocol
