#include "commands/peer_address.h"

#include <gtest/gtest.h>

namespace latch {
namespace {

TEST(PeerAddress, LoopbackByAddressNotByText) {
  EXPECT_TRUE(IsLoopbackPeer("127.0.0.1:6379"));
  EXPECT_TRUE(IsLoopbackPeer("127.45.6.7:1"));
  EXPECT_TRUE(IsLoopbackPeer("::1:50000"));
  EXPECT_TRUE(IsLoopbackPeer("::ffff:127.0.0.1:50000"));
  // Text that starts like a loopback address but is not one.
  EXPECT_FALSE(IsLoopbackPeer("::1f:2:50000"));
  EXPECT_FALSE(IsLoopbackPeer("::1ab:50000"));
  EXPECT_FALSE(IsLoopbackPeer("127.0.0.1.evil:50000"));
  EXPECT_FALSE(IsLoopbackPeer("10.0.0.1:50000"));
  EXPECT_FALSE(IsLoopbackPeer("::ffff:10.0.0.1:50000"));
  EXPECT_FALSE(IsLoopbackPeer(""));
  EXPECT_FALSE(IsLoopbackPeer("garbage"));
}

}  // namespace
}  // namespace latch
