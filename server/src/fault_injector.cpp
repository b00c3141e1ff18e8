#include "fault_injector.h"

#include <algorithm>
#include <chrono>

#include "glob_match.h"
#include "latch/protocol/case_fold.h"

namespace latch::testing {

std::int64_t FaultInjector::SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::optional<StallPoint> StallPointNamed(std::string_view name) {
  if (EqualsNoCase(name, "journal-append")) return StallPoint::kJournalAppend;
  if (EqualsNoCase(name, "journal-write")) return StallPoint::kJournalWrite;
  return std::nullopt;
}

void FaultInjector::Refresh() {
  const bool on =
      test_mode_.load(std::memory_order_relaxed) || !rules_.empty() || paused_until_ms_ != 0;
  active_.store(on, std::memory_order_relaxed);
}

void FaultInjector::set_test_mode(bool on) {
  std::lock_guard lock(mu_);
  test_mode_.store(on, std::memory_order_relaxed);
  Refresh();
}

std::uint64_t FaultInjector::Arm(FaultRule rule) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_id_++;
  std::mt19937_64 random(rule.seed);
  rules_.push_back(Armed{id, std::move(rule), random});
  Refresh();
  return id;
}

void FaultInjector::Pause(std::int64_t ms) {
  std::lock_guard lock(mu_);
  paused_until_ms_ = ms > 0 ? SteadyMs() + ms : 0;
  Refresh();
}

void FaultInjector::Clear() {
  std::lock_guard lock(mu_);
  rules_.clear();
  paused_until_ms_ = 0;
  ReleaseStallsLocked();
  Refresh();
}

void FaultInjector::Reset() {
  std::lock_guard lock(mu_);
  ReleaseStallsLocked();
  rules_.clear();
  paused_until_ms_ = 0;
  counts_ = FaultCounts{};
  by_command_.clear();
  Refresh();
}

bool FaultInjector::Matches(const FaultRule& rule, std::string_view command,
                            std::string_view key) const {
  // A subcommand ("client|kill") is also hit by a rule on its container ("client").
  const std::string_view container = command.substr(0, command.find('|'));
  if (!rule.command.empty() && !EqualsNoCase(rule.command, command) &&
      !EqualsNoCase(rule.command, container)) {
    return false;
  }
  if (rule.key_pattern.empty()) return true;
  return !key.empty() && GlobMatch(rule.key_pattern, key, false);
}

std::optional<FaultDecision> FaultInjector::Decide(std::string_view command,
                                                   std::string_view first_key) {
  std::lock_guard lock(mu_);
  if (test_mode_.load(std::memory_order_relaxed)) {
    auto it = by_command_.find(command);
    if (it == by_command_.end()) it = by_command_.emplace(std::string(command), 0).first;
    ++it->second;
  }
  if (paused_until_ms_ != 0) {
    const std::int64_t left = paused_until_ms_ - SteadyMs();
    if (left > 0) {
      ++counts_.paused_commands;
      return FaultDecision{FaultAction::kDelay, {}, left};
    }
    paused_until_ms_ = 0;
    Refresh();
  }
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    FaultRule& rule = it->rule;
    if (!Matches(rule, command, first_key)) continue;
    // Drawn for every matching command, hit or not: the seed fixes the whole sequence.
    if (rule.probability < 1.0 &&
        std::uniform_real_distribution<double>(0.0, 1.0)(it->random) >= rule.probability) {
      continue;
    }
    FaultDecision decision{rule.action, rule.error, rule.delay_ms};
    switch (rule.action) {
      case FaultAction::kError:
        ++counts_.errors;
        break;
      case FaultAction::kTimeout:
        ++counts_.timeouts;
        break;
      case FaultAction::kDropReply:
        ++counts_.dropped_replies;
        break;
      case FaultAction::kDelay:
        ++counts_.delays;
        break;
    }
    if (rule.count > 0 && --rule.count == 0) {
      rules_.erase(it);
      Refresh();
    }
    return decision;
  }
  return std::nullopt;
}

std::uint64_t FaultInjector::ArmStall(StallPoint point, std::string key_pattern, std::int64_t count,
                                      std::int64_t max_ms) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_id_++;
  stalls_.push_back(Stall{id, point, std::move(key_pattern), count, max_ms});
  stalls_armed_.store(true, std::memory_order_relaxed);
  return id;
}

void FaultInjector::Resume() {
  std::lock_guard lock(mu_);
  ReleaseStallsLocked();
}

void FaultInjector::ReleaseStallsLocked() {
  stalls_.clear();
  stalls_armed_.store(false, std::memory_order_relaxed);
  ++resumes_;
  resumed_.notify_all();
}

void FaultInjector::AtStallPoint(StallPoint point, std::string_view key) {
  std::unique_lock lock(mu_);
  auto it = std::find_if(stalls_.begin(), stalls_.end(), [&](const Stall& s) {
    return s.point == point &&
           (s.key_pattern.empty() || (!key.empty() && GlobMatch(s.key_pattern, key, false)));
  });
  if (it == stalls_.end()) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(it->max_ms);
  if (it->count > 0 && --it->count == 0) {
    stalls_.erase(it);
    if (stalls_.empty()) stalls_armed_.store(false, std::memory_order_relaxed);
  }
  ++counts_.stalls;
  ++stalled_threads_;
  const std::uint64_t seen = resumes_;
  resumed_.wait_until(lock, until, [&] { return resumes_ != seen; });
  --stalled_threads_;
}

FaultCounts FaultInjector::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::size_t FaultInjector::armed() const {
  std::lock_guard lock(mu_);
  return rules_.size();
}

std::map<std::string, std::uint64_t> FaultInjector::command_counts() const {
  std::lock_guard lock(mu_);
  return {by_command_.begin(), by_command_.end()};
}

void FaultInjector::AppendInfo(std::string* out) const {
  std::lock_guard lock(mu_);
  auto line = [out](std::string_view name, std::uint64_t v) {
    out->append(name).append(":").append(std::to_string(v)).append("\r\n");
  };
  line("test_mode", test_mode_.load(std::memory_order_relaxed) ? 1 : 0);
  line("faults_armed", rules_.size());
  line("faults_paused", paused_until_ms_ > SteadyMs() ? 1 : 0);
  line("faults_injected", counts_.total());
  line("fault_errors", counts_.errors);
  line("fault_timeouts", counts_.timeouts);
  line("fault_dropped_replies", counts_.dropped_replies);
  line("fault_delays", counts_.delays);
  line("fault_paused_commands", counts_.paused_commands);
  line("fault_stalls", counts_.stalls);
  line("fault_stalled_threads", stalled_threads_);
}

}  // namespace latch::testing
