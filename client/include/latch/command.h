#pragma once
// One request, encoded as a RESP multibulk as its arguments are added. Arguments may be
// anything string-like, integers, doubles or std::chrono durations:
//
//   latch::Command cmd("SET", key, value, "NX", "PX", std::chrono::milliseconds(3000));
//
// Durations are sent in milliseconds (the unit of PX, PEXPIRE and the LOCK.* commands), so
// "PX", 3s sends 3000; for a command that takes seconds, pass seconds.count().
#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace latch {

class Command {
 public:
  Command() = default;
  template <class... Args>
  explicit Command(const Args&... args) {
    (Add(args), ...);
  }

  Command& Add(std::string_view arg);
  Command& Add(const char* arg) { return Add(std::string_view(arg)); }
  Command& Add(const std::string& arg) { return Add(std::string_view(arg)); }
  template <std::integral T>
  Command& Add(T value) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
    (void)ec;  // 24 bytes hold any 64-bit integer
    return Add(std::string_view(buf, end - buf));
  }
  Command& Add(double value);
  template <class Rep, class Period>
  Command& Add(std::chrono::duration<Rep, Period> d) {
    return Add(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  }

  std::size_t argc() const { return argc_; }
  // The first argument, upper-cased (for logs and errors).
  std::string name() const;
  // Appends the encoded request to out.
  void AppendTo(std::string* out) const;
  std::string Encoded() const;

 private:
  std::string body_;  // the arguments, each as $len\r\n...\r\n
  std::string first_;
  std::size_t argc_ = 0;
};

}  // namespace latch
