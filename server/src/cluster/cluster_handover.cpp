// ClusterLog's leadership hand-over (RAFT TRANSFER, and a leader that stops: SIGTERM,
// SHUTDOWN), docs/CLUSTER.md "Membership and operations". libraft refuses every proposal while
// a transfer runs, and a refused proposal with effects makes this node dirty (it stops), so
// the node first stops serving and lets what it appended commit, then transfers.
#include <spdlog/logger.h>

#include <future>
#include <memory>

#include "cluster/cluster_log.h"

namespace latch::cluster {

void ClusterLog::HandOver(std::uint64_t target, std::int64_t keep_client,
                          RaftNode::ChangeDone done) {
  {
    std::lock_guard lock(handover_mu_);
    if (handover_done_) {
      done("a leadership transfer is already in progress");
      return;
    }
    handover_done_ = std::move(done);
    handover_started_ = false;
    handover_target_ = target;
    handover_deadline_ =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.election_timeout_ms);
    keep_client_ = keep_client;
    handing_over_ = true;
  }
  // From here the dispatcher refuses what needs the leader; the proposer (RefreshRole) closes
  // the other clients and, once the records appended so far committed, starts the transfer.
  p_.raft_follower.store(true, std::memory_order_release);
  cv_.notify_one();
}

// On the proposer thread, after each pass.
void ClusterLog::ContinueHandOver() {
  // Not before RefreshRole has seen the hand-over: a pass that read handing_over_ just before
  // HandOver set it may have let the dispatcher serve again (raft_follower false).
  if (leader_.load()) return;
  std::uint64_t target;
  bool start = false;
  {
    std::lock_guard lock(handover_mu_);
    if (!handover_done_ || handover_started_) return;
    bool settled;
    {
      std::lock_guard log_lock(mu_);
      settled =
          !queue_.queued() && !queue_.markers_pending() && queue_.watermark() >= queue_.appended();
    }
    if (!settled) {
      if (std::chrono::steady_clock::now() < handover_deadline_) return;
    } else {
      handover_started_ = start = true;
    }
    target = handover_target_;
  }
  if (!start) {
    EndHandOver("writes in flight did not commit within the election timeout");
    return;
  }
  node_->Transfer(target, [this](const std::string& error) { EndHandOver(error); });
}

void ClusterLog::EndHandOver(const std::string& error) {
  RaftNode::ChangeDone done;
  {
    std::lock_guard lock(handover_mu_);
    done = std::move(handover_done_);
    handover_done_ = nullptr;
    handover_started_ = false;
    handing_over_ = false;  // RefreshRole serves again if this node still leads
    keep_client_ = 0;
  }
  cv_.notify_one();
  if (done) done(error);
}

// A leader that stops hands leadership to its most up-to-date follower first, so that a
// planned restart costs a transfer (a round trip and an election won at once) instead of an
// election timeout. Bounded: the settling wait and libraft's own bound of one election
// timeout each, plus a margin.
void ClusterLog::HandOverBeforeStop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  if (!leader_.load() || dirty_.load()) return;
  auto result = std::make_shared<std::promise<std::string>>();
  auto outcome = result->get_future();
  HandOver(0, 0, [result](const std::string& error) { result->set_value(error); });
  const auto bound = std::chrono::milliseconds(2 * config_.election_timeout_ms + 1000);
  if (outcome.wait_for(bound) != std::future_status::ready) {
    p_.log.warn("Raft node {}: no leadership transfer before stopping (timed out)", config_.id);
    return;
  }
  const std::string error = outcome.get();
  if (error.empty()) {
    p_.log.info("Raft node {}: handed leadership over before stopping", config_.id);
  } else {
    p_.log.warn("Raft node {}: no leadership transfer before stopping: {}", config_.id, error);
  }
}

}  // namespace latch::cluster
