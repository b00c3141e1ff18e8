#include "journal/token_floor.h"

#include <fcntl.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "journal/aof_files.h"

namespace latch::journal {
namespace {
// The refill thread's period: far below kReserveAheadNs / 2, so Next() does not reach the
// limit while the thread sleeps.
constexpr auto kRefillEvery = std::chrono::milliseconds(250);

std::string DirOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The stored floor, 0 when there is no file. Throws on anything but one valid number.
std::uint64_t ReadFloor(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    throw std::runtime_error("Can't open the fencing token floor " + path + ": " +
                             std::strerror(errno));
  }
  ::close(fd);
  std::string text = ReadWholeFile(path);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::uint64_t floor = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), floor);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !store::FencingTokens::Valid(floor)) {
    throw std::runtime_error("Bad fencing token floor in " + path + ": '" + text.substr(0, 40) +
                             "'. It must hold the highest token this server may have granted; "
                             "restore it, or delete it only if no lock granted before is "
                             "still in use");
  }
  return floor;
}
}  // namespace

TokenFloor::TokenFloor(store::FencingTokens& tokens, std::string path,
                       std::function<std::int64_t()> wall_us, spdlog::logger& log)
    : log_(log), tokens_(tokens), wall_us_(std::move(wall_us)), path_(std::move(path)) {}

TokenFloor::~TokenFloor() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  tokens_.UseReservations(nullptr, 0);
}

void TokenFloor::Start() {
  std::string path;
  {
    std::lock_guard lock(write_mu_);
    path = path_;
  }
  const std::uint64_t floor = ReadFloor(path);
  tokens_.AtLeast(floor);
  {
    std::lock_guard lock(write_mu_);
    written_ = floor;
  }
  if (!tokens_.UseReservations(this, wall_us_())) {
    tokens_.UseReservations(nullptr, 0);
    std::lock_guard lock(write_mu_);
    throw std::runtime_error("Can't write the fencing token floor " + path + ": " +
                             std::strerror(last_errno_));
  }
  log_.info("Fencing tokens continue above {} (the floor in {})", tokens_.last(), path);
  thread_ = std::thread([this] { Run(); });
}

void TokenFloor::Move(std::string path) {
  std::lock_guard lock(write_mu_);
  path_ = std::move(path);
  WriteLocked(std::max(wanted_, written_));
}

bool TokenFloor::Reserve(std::uint64_t limit) {
  std::lock_guard lock(write_mu_);
  wanted_ = std::max(wanted_, limit);
  return WriteLocked(wanted_);
}

bool TokenFloor::WriteLocked(std::uint64_t limit) {
  const std::string tmp = path_ + ".tmp";
  const std::string text = std::to_string(limit) + "\n";
  int err = 0;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = errno;
  } else {
    errno = ENOSPC;  // what a short write means
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::fsync(fd) != 0) {
      err = errno;
    }
    ::close(fd);
  }
  if (err == 0 && ::rename(tmp.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0) {
    last_errno_ = err;
    if (ok_.exchange(false)) {
      log_.warn("Can't write the fencing token floor {}: {}", path_, std::strerror(err));
    }
    return false;
  }
  SyncDirectory(DirOf(path_));
  written_ = limit;
  saves_.fetch_add(1, std::memory_order_relaxed);
  if (!ok_.exchange(true)) log_.warn("The fencing token floor {} is written again", path_);
  return true;
}

void TokenFloor::Run() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, kRefillEvery, [&] { return stop_; })) {
    lock.unlock();
    if (!tokens_.Refill(wall_us_())) {
      std::lock_guard wlock(write_mu_);
      if (written_ < wanted_) WriteLocked(wanted_);  // a write that failed: retried here
    }
    lock.lock();
  }
}

void TokenFloor::AppendInfo(std::string* s) const {
  std::uint64_t written;
  {
    std::lock_guard lock(write_mu_);
    written = written_;
  }
  s->append("token_floor:").append(std::to_string(written)).append("\r\n");
  s->append("token_floor_saves:").append(std::to_string(saves())).append("\r\n");
  s->append("token_floor_status:").append(ok_.load() ? "ok" : "err").append("\r\n");
}

}  // namespace latch::journal
