#include "chromium.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace latch::demo::test {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(30);  // a cold start on a busy machine

bool WriteAll(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::write(fd, data.data() + sent, data.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

HeadlessChromium::HeadlessChromium() = default;

HeadlessChromium::~HeadlessChromium() {
  if (pid_ > 0) {
    // Politely first (the browser closes its children), then whatever is left of its process
    // group (it leads one: setpgid in Open).
    if (to_browser_ >= 0) {
      WriteAll(to_browser_, std::string(R"({"id":999999,"method":"Browser.close"})") + '\0');
    }
    bool reaped = false;
    for (int i = 0; i < 60 && !reaped; ++i) {  // up to 3 s
      reaped = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!reaped) ::usleep(50'000);
    }
    ::kill(-pid_, SIGKILL);
    if (!reaped) ::waitpid(pid_, nullptr, 0);
  }
  if (to_browser_ >= 0) ::close(to_browser_);
  if (from_browser_ >= 0) ::close(from_browser_);
  if (!profile_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(profile_dir_, ignored);
  }
}

bool HeadlessChromium::Open(const std::string& url) {
  if (::access(kChromiumPath, X_OK) != 0) {
    error_ = std::string(kChromiumPath) + " not found: apt-get install chromium (scripts/deps.sh)";
    return false;
  }
  char dir[] = "/tmp/latch-chromium-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    error_ = "mkdtemp failed";
    return false;
  }
  profile_dir_ = dir;
  int in[2];   // we write in[1]; the browser reads fd 3
  int out[2];  // the browser writes fd 4; we read out[0]
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    error_ = "pipe failed";
    return false;
  }
  const std::string profile_flag = "--user-data-dir=" + profile_dir_;
  const std::string log_path = profile_dir_ + "/chromium.log";
  std::vector<std::string> args = {kChromiumPath,
                                   "--headless",
                                   "--no-sandbox",  // as root in CI
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--remote-debugging-pipe",
                                   profile_flag,
                                   "about:blank"};
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
    ::dup2(in[0], 3);
    ::dup2(out[1], 4);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_browser_ = in[1];
  from_browser_ = out[0];
  if (pid_ < 0) {
    error_ = "fork failed";
    return false;
  }
  json::value target = Call("Target.createTarget", {{"url", url}}, false);
  if (!target.is_object() || !target.as_object().contains("targetId")) return false;
  json::value attached = Call("Target.attachToTarget",
                              {{"targetId", target.at("targetId")}, {"flatten", true}}, false);
  if (!attached.is_object() || !attached.as_object().contains("sessionId")) return false;
  session_id_ = std::string(attached.at("sessionId").as_string());
  return true;
}

json::value HeadlessChromium::Evaluate(const std::string& expression) {
  json::value r = Call(
      "Runtime.evaluate",
      {{"expression", expression}, {"awaitPromise", true}, {"returnByValue", true}}, true);
  if (!r.is_object()) return nullptr;
  if (const auto* exception = r.as_object().if_contains("exceptionDetails")) {
    error_ = "exception in the page: " + json::serialize(*exception);
    return nullptr;
  }
  const auto* result = r.as_object().if_contains("result");
  if (result == nullptr || !result->is_object()) return nullptr;
  const auto* value = result->as_object().if_contains("value");
  return value != nullptr ? *value : json::value();
}

bool HeadlessChromium::WaitFor(const std::string& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    json::value v = Evaluate(condition);
    if (v.is_bool() && v.as_bool()) return true;
    ::usleep(50'000);
  }
  error_ = "timed out waiting for " + condition + (error_.empty() ? "" : " (" + error_ + ")");
  return false;
}

json::value HeadlessChromium::Call(const std::string& method, json::object params,
                                   bool session) {
  const int id = next_id_++;
  json::object message{{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (session) message["sessionId"] = session_id_;
  if (!WriteAll(to_browser_, json::serialize(message) + '\0')) {
    error_ = "the browser's pipe is closed";
    return nullptr;
  }
  const auto deadline = Clock::now() + kCallTimeout;
  std::string text;
  // Bounded by the deadline: events (messages without our id) are skipped.
  while (ReadMessage(&text, deadline)) {
    boost::system::error_code ec;
    json::value reply = json::parse(text, ec);
    if (ec || !reply.is_object()) continue;
    const auto* reply_id = reply.as_object().if_contains("id");
    if (reply_id == nullptr || !reply_id->is_int64() || reply_id->as_int64() != id) continue;
    if (const auto* err = reply.as_object().if_contains("error")) {
      error_ = method + ": " + json::serialize(*err);
      return nullptr;
    }
    const auto* result = reply.as_object().if_contains("result");
    return result != nullptr ? *result : json::value(json::object());
  }
  if (error_.empty()) error_ = method + ": no answer from the browser";
  return nullptr;
}

bool HeadlessChromium::ReadMessage(std::string* message, Clock::time_point deadline) {
  for (;;) {
    std::size_t end = buffer_.find('\0');
    if (end != std::string::npos) {
      *message = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      error_ = "timed out reading from the browser";
      return false;
    }
    pollfd p{from_browser_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline check above ends it
    char chunk[65536];
    ssize_t n = ::read(from_browser_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "the browser exited (log: " + profile_dir_ + "/chromium.log)";
      return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace latch::demo::test
