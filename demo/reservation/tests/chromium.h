#pragma once
// A headless Chromium for tests, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages separated by NUL bytes on fds 3 and 4, no
// WebSocket). One browser process per object, with its own profile in a temp dir; it opens
// one page and evaluates JavaScript in it. Headless and --no-sandbox, so it runs as root
// without a display (CI). Every wait is bounded; the destructor kills the browser.
#include <sys/types.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <string>

namespace latch::demo::test {

// Debian's chromium package puts it here.
inline constexpr const char* kChromiumPath = "/usr/bin/chromium";

class HeadlessChromium {
 public:
  HeadlessChromium();
  ~HeadlessChromium();
  HeadlessChromium(const HeadlessChromium&) = delete;
  HeadlessChromium& operator=(const HeadlessChromium&) = delete;

  // Starts the browser and opens `url` in a page; false and error() on failure.
  bool Open(const std::string& url);
  // Evaluates `expression` in the page (awaiting a promise it returns); its value as JSON,
  // null with error() set on failure.
  boost::json::value Evaluate(const std::string& expression);
  // Evaluates `condition` until it is true, every 50 ms, for at most `timeout`.
  bool WaitFor(const std::string& condition, std::chrono::milliseconds timeout);
  const std::string& error() const { return error_; }

 private:
  // Sends one command (to the page's session when `session` is set) and returns its result.
  boost::json::value Call(const std::string& method, boost::json::object params, bool session);
  bool ReadMessage(std::string* message, std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int to_browser_ = -1;    // our end of its fd 3
  int from_browser_ = -1;  // our end of its fd 4
  std::string profile_dir_;
  std::string session_id_;
  std::string buffer_;  // bytes read past the last message
  int next_id_ = 1;
  std::string error_;
};

}  // namespace latch::demo::test
