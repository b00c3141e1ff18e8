// Dispatch's fast path (commands/dispatch_fast_path.h) and commandstats' one-compare
// threshold (metrics/command_stats.h): each must answer exactly what the slower code it
// replaces answered.
#include "commands/dispatch_fast_path.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "metrics/command_stats.h"

namespace latch {
namespace {

// Every top-level name of the real table, plus names of every length from 1 to 20 made of
// the bytes command names use (letters, digits, '.', '_', '|', '-').
std::vector<CommandSpec> NameSpecs() {
  std::vector<CommandSpec> specs;
  CommandTable table;
  table.ForEach([&](const CommandSpec& c) { specs.push_back(CommandSpec{.name = c.name}); });
  const std::string alphabet = "lock.acquire_x|9-zq";
  for (std::size_t n = 1; n <= 20; ++n) {
    std::string name;
    for (std::size_t i = 0; i < n; ++i) name.push_back(alphabet[(i * 7 + n) % alphabet.size()]);
    specs.push_back(CommandSpec{.name = name});
  }
  return specs;
}

// The cache must recognise a name exactly when EqualsNoCase does: every byte value at every
// position, and the name in upper and mixed case.
TEST(DispatchFastPath, RecallMatchesExactlyTheCaseInsensitiveName) {
  const std::vector<CommandSpec> specs = NameSpecs();
  std::size_t checked = 0;
  for (const CommandSpec& spec : specs) {
    dispatch::Remember(specs, &spec);
    const std::string& name = spec.name;
    EXPECT_EQ(dispatch::Recall(specs, name), &spec) << name;
    std::string upper = name, mixed = name;
    for (std::size_t i = 0; i < name.size(); ++i) {
      upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
      if (i % 2 == 0) mixed[i] = upper[i];
    }
    EXPECT_EQ(dispatch::Recall(specs, upper), &spec) << upper;
    EXPECT_EQ(dispatch::Recall(specs, mixed), &spec) << mixed;
    EXPECT_EQ(dispatch::Recall(specs, name + "x"), nullptr) << name;
    EXPECT_EQ(dispatch::Recall(specs, name.substr(0, name.size() - 1)), nullptr) << name;
    for (std::size_t i = 0; i < name.size(); ++i) {
      for (int b = 0; b < 256; ++b) {
        std::string probe = name;
        probe[i] = static_cast<char>(b);
        const bool want = EqualsNoCase(probe, name);
        ASSERT_EQ(dispatch::Recall(specs, probe) != nullptr, want)
            << name << " byte " << i << " = " << b;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

// Another table (another base or size), or the same slot holding another name, is a miss.
TEST(DispatchFastPath, RecallMissesForAnotherTableOrAChangedSpec) {
  std::vector<CommandSpec> specs = NameSpecs();
  dispatch::Remember(specs, &specs[0]);
  const std::string name = specs[0].name;
  const std::vector<CommandSpec> other = NameSpecs();
  EXPECT_EQ(dispatch::Recall(other, name), nullptr);
  EXPECT_EQ(dispatch::Recall(std::span<const CommandSpec>(specs).first(specs.size() - 1), name),
            nullptr);
  specs[0].name = name == "zzz" ? "yyy" : "zzz";  // same address, other command
  EXPECT_EQ(dispatch::Recall(specs, name), nullptr);
}

// SLOWLOG records floor(nanos / 1000) >= slower_than (us), LATENCY floor(nanos / 1e6) >=
// threshold (ms): the precomputed threshold must let exactly those through.
TEST(DispatchFastPath, SlowThresholdIsExact) {
  EXPECT_EQ(RecordSlowNanos(-1, 0), UINT64_MAX);  // both off
  EXPECT_EQ(RecordSlowNanos(0, 0), 0u);           // slowlog everything
  EXPECT_EQ(RecordSlowNanos(10000, 0), 10'000'000u);
  EXPECT_EQ(RecordSlowNanos(-1, 5), 5'000'000u);
  EXPECT_EQ(RecordSlowNanos(10000, 5), 5'000'000u);  // the smaller
  EXPECT_EQ(RecordSlowNanos(3, 5), 3000u);
  EXPECT_EQ(RecordSlowNanos(INT64_MAX, 0), UINT64_MAX);  // saturates, never wraps
  EXPECT_EQ(RecordSlowNanos(-1, INT64_MAX), UINT64_MAX);
  for (std::int64_t us : {0, 1, 7, 999, 10000}) {
    const std::uint64_t t = RecordSlowNanos(us, 0);
    for (std::uint64_t n : {t - 1, t, t + 1}) {
      if (us == 0 && n == t - 1) continue;  // would wrap
      EXPECT_EQ(n >= t, static_cast<std::int64_t>(n / 1000) >= us) << us << " " << n;
    }
  }
  for (std::int64_t ms : {1, 2, 250}) {
    const std::uint64_t t = RecordSlowNanos(-1, ms);
    for (std::uint64_t n : {t - 1, t, t + 1}) {
      EXPECT_EQ(n >= t, static_cast<std::int64_t>(n / 1'000'000) >= ms) << ms << " " << n;
    }
  }
}

}  // namespace
}  // namespace latch
