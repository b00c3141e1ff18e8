#include "protocol/request_parser_check.h"

#include <gtest/gtest.h>

namespace latch::protocol::testing {

void CheckCase(const Case& c) {
  SCOPED_TRACE("case " + c.name + ": " + Escape(c.input.substr(0, 80)));
  const Outcome expected{c.events, c.leftover, c.bytes_wanted};
  const Outcome whole = FeedWhole(c.limits, c.input);
  EXPECT_EQ(whole, expected) << "whole: " << Describe(whole) << "\nwant:  " << Describe(expected);
  if (!c.split_invariant) return;

  std::vector<std::size_t> offsets;
  const std::size_t n = c.input.size();
  for (std::size_t i = 0; i <= n; ++i) {
    // Big inputs: both ends, around the 64 KiB line limit, and a stride between.
    const bool edge =
        i <= 64 || n - i <= 64 || (i + 4 >= kInlineMaxSize && i <= kInlineMaxSize + 8);
    if (n <= 2048 || edge || i % 8191 == 0) offsets.push_back(i);
  }
  int failures = 0;
  for (std::size_t cut : offsets) {
    const Outcome split = FeedSplitAt(c.limits, c.input, cut);
    EXPECT_EQ(split, expected) << "split at " << cut << ": " << Describe(split);
    if (split != expected && ++failures == 3) return;  // enough to diagnose
  }
  const Outcome bytewise = FeedBytewise(c.limits, c.input);
  EXPECT_EQ(bytewise, expected) << "bytewise: " << Describe(bytewise);
}

}  // namespace latch::protocol::testing
