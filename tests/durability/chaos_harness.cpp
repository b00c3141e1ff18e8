#include "durability/chaos_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

int ChaosSeconds() {
  const char* env = std::getenv("LATCH_CHAOS_SECONDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 12;
}

Chaos::Chaos(std::vector<std::string> directives, ChaosOptions options)
    : options_(options), server_(std::move(directives)), resource_(options.keys) {}

Counts Chaos::Run(int seconds) {
  if (!server_.Start()) {
    ADD_FAILURE() << server_.Log();
    return {};
  }
  const auto start = Clock::now();
  std::vector<std::thread> clients;
  for (int i = 0; i < options_.clients; ++i) clients.emplace_back([this, i] { Client(i); });
  Faults(seconds);
  stop_ = true;
  for (auto& t : clients) t.join();
  server_.Stop();
  Counts c;
  c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  c.grants = leases_.size();
  c.verdict = CheckHistory(leases_);
  c.kills = kills_;
  c.pauses = pauses_;
  c.drops = drops_;
  c.fenced_refusals = resource_.refused();
  c.fenced_accepted_below = resource_.accepted_below_seen();
  return c;
}

// A run to a number of grants also sees every kind of fault: at least three rounds (two kills
// and a SIGSTOP).
bool Chaos::Done(int rounds) const {
  return options_.target_grants != 0 && recorded_.load() >= options_.target_grants && rounds >= 3;
}

// Every 1-2.5 s: kill -9 and an immediate restart, every third time a 200-600 ms SIGSTOP.
void Chaos::Faults(int seconds) {
  std::mt19937 rng(12345);
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  for (int round = 1; Clock::now() < end && !Done(round - 1); ++round) {
    std::this_thread::sleep_for(milliseconds(1000 + rng() % 1500));
    if (round % 3 == 0) {
      server_.Pause();
      std::this_thread::sleep_for(milliseconds(200 + rng() % 400));
      server_.Resume();
      ++pauses_;
    } else {
      server_.Kill9();
      ++kills_;
      if (!server_.Start()) {
        ADD_FAILURE() << "restart failed\n" << server_.Log();
        return;
      }
    }
  }
}

void Chaos::Record(const Lease& l) {
  std::lock_guard lock(mu_);
  leases_.push_back(l);
  ++recorded_;
}

// One client: acquire a random hot key; on a grant, work (one time in stall_one_in pause past
// the TTL), write to the fenced resource with the token, release.
void Chaos::Client(int id) {
  std::mt19937 rng(static_cast<unsigned>(id) * 7919u + 1);
  RawConnection conn(milliseconds(1500));
  std::uint64_t n = 0;
  const std::int64_t ttl_ms = options_.ttl_ms;
  while (!stop_) {
    if (!conn.connected() && !conn.Connect(server_.port())) {
      std::this_thread::sleep_for(milliseconds(10));
      continue;
    }
    Lease l;
    l.key = static_cast<int>(rng() % static_cast<unsigned>(options_.keys));
    l.client = id;
    l.ttl_ms = ttl_ms;
    const std::string key = "chaos:" + std::to_string(l.key);
    const std::string owner = "c" + std::to_string(id) + "-" + std::to_string(++n);
    const std::vector<std::string> acquire = {"LOCK.ACQUIRE", key, owner, std::to_string(ttl_ms)};
    l.sent_us = NowUs();
    // A dropped connection right after the request.
    if (rng() % static_cast<unsigned>(options_.drop_one_in) == 0) {
      conn.Send(RawConnection::Encode(acquire));
      conn.Close();
      ++drops_;
      continue;
    }
    const std::string reply = conn.CommandArgs(acquire);
    l.granted_us = NowUs();
    if (reply.empty() || reply[0] != ':') {
      if (reply.rfind("<no reply", 0) == 0) conn.Close();
      std::this_thread::sleep_for(milliseconds(5 + rng() % 20));
      continue;
    }
    l.token = std::stoull(reply.substr(1));
    const bool stall = rng() % static_cast<unsigned>(options_.stall_one_in) == 0;
    const unsigned spread = static_cast<unsigned>(std::max(1, options_.work_spread_ms));
    std::this_thread::sleep_for(
        milliseconds(stall ? ttl_ms * 3 / 2 : options_.work_min_ms + rng() % spread));
    resource_.Write(l.key, l.token);
    l.released_us = NowUs();
    Record(l);
    if (conn.CommandArgs({"LOCK.RELEASE", key, owner}).rfind("<no reply", 0) == 0) conn.Close();
  }
}

void Print(const char* mode, const Counts& c) {
  std::printf(
      "[chaos] %-28s leases=%zu overlaps=%zu token_order=%zu fenced_refusals=%zu "
      "accepted_below_seen=%zu kills=%zu pauses=%zu drops=%zu\n",
      mode, c.verdict.leases, c.verdict.overlaps, c.verdict.token_order, c.fenced_refusals,
      c.fenced_accepted_below, c.kills, c.pauses, c.drops);
}

}  // namespace latch::test
