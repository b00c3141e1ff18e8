#pragma once
// The fencing-token floor: a small file in `dir` holding a limit that every token handed out
// so far is at or below (store/fencing_tokens.h reserves ahead, a few seconds of wall clock
// at a time). A restarted server starts its tokens above it, so tokens keep increasing across
// a crash even when the wall clock went back and nothing else was saved (lock-restart-delay
// without the journal), and beyond what an fdatasync'd-every-second journal kept after a power
// loss.
//
// The file is one decimal number and a newline, replaced atomically (temporary file, fsync,
// rename, fsync of the directory). A write happens at start-up and then about once per
// kReserveAheadNs / 2 of wall clock (a background thread moves the limit on before it is
// reached), so grants do not wait for the disk. A failed write is logged, shown in INFO
// (token_floor_status:err) and retried by that thread.
//
// Kept when the server persists anything about its locks: appendonly yes or
// lock-restart-delay > 0 at start-up, or either set later by CONFIG SET (docs/LOCKS.md).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "store/fencing_tokens.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace latch::journal {

inline constexpr std::string_view kTokenFloorFile = "fencing-tokens.floor";

class TokenFloor final : public store::TokenReservations {
 public:
  // `path`: the file (relative to the working directory, or absolute). `wall_us` reads the
  // server's clock.
  // Its notices and warnings go to `log` (the server's logger), which must outlive it.
  TokenFloor(store::FencingTokens& tokens, std::string path, std::function<std::int64_t()> wall_us,
             spdlog::logger& log);
  ~TokenFloor() override;
  TokenFloor(const TokenFloor&) = delete;
  TokenFloor& operator=(const TokenFloor&) = delete;

  // Reads the stored floor (none on a first start), raises the counter above it, reserves
  // ahead and starts the refill thread. Throws std::runtime_error when the file cannot be
  // read, holds no valid floor, or the first reservation cannot be written: the server must
  // not start then.
  void Start();
  // CONFIG SET dir: the file's new path; the current limit is written there at once.
  void Move(std::string path);

  bool Reserve(std::uint64_t limit) override;

  // INFO "# Persistence": token_floor, token_floor_saves, token_floor_status.
  void AppendInfo(std::string* s) const;
  std::uint64_t saves() const { return saves_.load(std::memory_order_relaxed); }

 private:
  spdlog::logger& log_;
  void Run();
  bool WriteLocked(std::uint64_t limit);  // under write_mu_

  store::FencingTokens& tokens_;
  std::function<std::int64_t()> wall_us_;
  mutable std::mutex write_mu_;
  std::string path_;           // under write_mu_
  std::uint64_t written_ = 0;  // the limit on disk; under write_mu_
  std::uint64_t wanted_ = 0;   // the highest limit asked for; under write_mu_
  int last_errno_ = 0;         // why the last write failed; under write_mu_
  std::atomic<std::uint64_t> saves_{0};
  std::atomic<bool> ok_{true};

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace latch::journal
