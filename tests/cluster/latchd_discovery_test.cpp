// How clients find the leader of a three-node latchd cluster (docs/CLUSTER.md, "Clients and
// leader discovery"), over real processes on loopback.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/latchd_cluster.h"

namespace latch::test {
namespace {

constexpr std::string_view kReadOnly = "-READONLY You can't write against a read only replica.\r\n";

// The fast path of Dispatch (a command the worker ran last, an ordinary client) must not skip
// a follower's refusal: before the fix, the second SET on one connection ran on the follower,
// its entry failed as "not the leader" and the follower stopped.
TEST(LatchdClusterDiscovery, FollowerRefusesEveryWriteOnOneConnectionAndStaysUp) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  const int follower = (leader + 1) % Cluster::kNodes;
  RawConnection conn(c.port(follower), std::chrono::milliseconds(5000));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(conn.Command("SET", "k", std::to_string(i)), kReadOnly) << i;
    EXPECT_EQ(conn.Command("DEL", "k"), kReadOnly) << i;
  }
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n") << c.Log(follower);
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "k"}), "$-1\r\n");
  EXPECT_EQ(c.Leader(), leader) << c.Logs();
}

}  // namespace
}  // namespace latch::test
