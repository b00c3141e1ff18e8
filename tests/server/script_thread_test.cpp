// ScriptThread's Post() and Stop() from different threads: a task posted while a Stop()
// waits for the thread's current task runs afterwards (it used to be dropped after the old
// thread quit, and its client was never answered), and Posts racing Stops neither crash
// (a Post between the join and the reset used to start a thread the reset assigned over:
// std::terminate) nor lose a task. Bounded in count and time.
#include "scripting/script_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace latch::scripting {
namespace {

using std::chrono::seconds;

// Waits for `done` with a deadline (a condition, not a pause).
template <class Pred>
bool Eventually(Pred done, seconds limit = seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(ScriptThread, PostDuringStopRunsAfterTheOldThreadEnds) {
  std::atomic<bool> busy{false};
  ScriptThread thread(busy);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first_started{false};
  ASSERT_TRUE(thread.Post(
      [&] {
        first_started = true;
        released.wait();
      },
      [] {}));
  ASSERT_TRUE(Eventually([&] { return first_started.load(); }));
  auto stopper = std::async(std::launch::async, [&] { thread.Stop(); });
  ASSERT_TRUE(Eventually([&] { return thread.stopping(); }));
  std::atomic<std::thread::id> second_ran_on{};
  std::atomic<bool> second_refused{false};
  ASSERT_TRUE(thread.Post([&] { second_ran_on = std::this_thread::get_id(); },
                          [&] { second_refused = true; }));
  release.set_value();
  ASSERT_EQ(stopper.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(Eventually([&] { return second_ran_on.load() != std::thread::id{}; }))
      << "the task posted during Stop() never ran";
  EXPECT_FALSE(second_refused.load());
  thread.Stop();
}

// Posters and a stopper race; every task is either run or dropped by a Stop(), and once the
// stopper is done every task posted runs. Rounds of a fresh thread each, bounded in count and
// time (before the fix, one round in about fifteen ended in std::terminate).
void PostsRacingStops() {
  constexpr int kPosters = 3;
  constexpr int kPosts = 3000;
  constexpr int kStops = 300;
  std::atomic<bool> busy{false};
  ScriptThread thread(busy);
  std::atomic<int> ran{0}, dropped{0}, posted{0};
  // Counts a task destroyed without having run.
  struct Token {
    std::atomic<int>* dropped = nullptr;
    bool ran = false;
    ~Token() {
      if (!ran) dropped->fetch_add(1);
    }
  };
  auto post = [&] {
    auto token = std::make_shared<Token>();
    token->dropped = &dropped;
    if (thread.Post(
            [&ran, token] {
              token->ran = true;
              ran.fetch_add(1);
            },
            [] { ADD_FAILURE() << "refused while no script is busy"; })) {
      posted.fetch_add(1);
    }
  };
  std::vector<std::thread> posters;
  for (int p = 0; p < kPosters; ++p) {
    posters.emplace_back([&] {
      for (int i = 0; i < kPosts; ++i) post();
    });
  }
  std::thread stopper([&] {
    for (int i = 0; i < kStops; ++i) thread.Stop();
  });
  for (auto& t : posters) t.join();
  stopper.join();
  for (int i = 0; i < 100; ++i) post();  // no Stop() any more: each of these must run
  EXPECT_TRUE(Eventually([&] { return ran.load() + dropped.load() == posted.load(); }))
      << "ran " << ran << " dropped " << dropped << " posted " << posted;
  EXPECT_EQ(posted.load(), kPosters * kPosts + 100);
  thread.Stop();
}

TEST(ScriptThread, PostsRacingStopsLoseNothing) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(8);
  for (int round = 0; round < 60 && std::chrono::steady_clock::now() < deadline; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    PostsRacingStops();
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace latch::scripting
