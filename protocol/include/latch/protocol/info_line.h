#pragma once
// One "key:value\r\n" line of an INFO reply, as every INFO section writes it.
#include <concepts>
#include <string>
#include <string_view>

namespace latch::protocol {

inline void AppendInfoLine(std::string* s, std::string_view key, std::string_view value) {
  s->append(key);
  s->push_back(':');
  s->append(value);
  s->append("\r\n");
}

template <std::integral T>
void AppendInfoLine(std::string* s, std::string_view key, T value) {
  AppendInfoLine(s, key, std::to_string(value));
}

}  // namespace latch::protocol
