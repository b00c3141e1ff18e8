// latch::Client and latch::Lock given every node of a three-node latchd cluster
// (redis://h1:p1,h2:p2,h3:p3): calls reach the leader wherever it is, a lease taken through it
// survives kill -9 of that leader, and the client follows the new leader without being told.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cluster/latchd_cluster.h"
#include "latch/client.h"
#include "latch/lock.h"

namespace latch::test {
namespace {

// Followers first: the client must find the leader, not just use the first node.
std::string ClusterClientUrl(const Cluster& c, int leader) {
  std::string url = "redis://";
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader) continue;
    url += "127.0.0.1:" + std::to_string(c.port(i)) + ",";
  }
  return url + "127.0.0.1:" + std::to_string(c.port(leader));
}

TEST(LatchdClusterClient, FollowsTheLeaderAcrossAKill9) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();

  auto options = ClientOptions::FromUrl(ClusterClientUrl(c, leader)).value();
  ASSERT_EQ(options.nodes.size(), 3u);
  // A call made during the election waits for the next leader: longer than any election.
  options.call_timeout = kElection + std::chrono::milliseconds(5000);
  Client client(options);
  Lock lock(client);
  auto lease = lock.acquire_sync("lock:cc", std::chrono::milliseconds(60000));
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  ASSERT_TRUE(lease->fencing_token.has_value());
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:cc"}), Bulk(lease->owner));

  c.Kill9(leader);
  // No leader for a while: the write waits (TRYAGAIN and refused connections are retried),
  // then lands on whichever node wins.
  auto after = client.command_sync("SET", "after:cc", "1");
  ASSERT_TRUE(after.ok()) << after.error().ToString() << "\n" << c.Logs();
  EXPECT_EQ(after->str, "OK");
  const int next = c.WaitLeader();
  ASSERT_NE(next, -1) << c.Logs();
  EXPECT_NE(next, leader);
  EXPECT_EQ(Cmd(c.port(next), {"GET", "after:cc"}), Bulk("1"));

  // The lease is still held on the new leader: another acquire is refused, the holder's
  // release (compare-and-delete on its owner token) succeeds, and the next grant's fencing
  // token is above the first.
  Client other(options);
  Lock other_lock(other);
  auto refused = other_lock.acquire_sync("lock:cc", std::chrono::milliseconds(60000));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().is(Errc::kNotAcquired)) << refused.error().ToString();
  auto released = lock.release_sync(*lease);
  ASSERT_TRUE(released.ok()) << released.error().ToString();
  EXPECT_EQ(*released, LeaseStatus::kOk);
  auto second = other_lock.acquire_sync("lock:cc", std::chrono::milliseconds(60000));
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  ASSERT_TRUE(second->fencing_token.has_value());
  EXPECT_GT(*second->fencing_token, *lease->fencing_token);
}

}  // namespace
}  // namespace latch::test
