// The launcher the durability and chaos tests share (latchd_child.h): it must never take
// another process's server for its own. A redis-server sits on the port LatchdChild picked
// (as another test's server, restarted on its own port, can): before the owner check, Start()
// saw "loading:0" there and returned true, and the test then drove redis-server.
#include "durability/latchd_child.h"

#include <gtest/gtest.h>

#include <string>

#include "support/port_owner.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

TEST(LatchdChildTest, StartsOnAnotherPortWhenItsPortIsServedByAnotherProcess) {
  LatchdChild child({});
  const int picked = child.port();
  ServerProcess squatter("redis-server",
                         {"redis-server", "--port", std::to_string(picked), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no"},
                         picked);
  ASSERT_TRUE(squatter.ok()) << squatter.error();
  ASSERT_TRUE(ListensOn(squatter.pid(), picked));
  EXPECT_FALSE(ListensOn(squatter.pid() + 100000, picked));  // no such process

  ASSERT_TRUE(child.Start()) << child.Log();
  EXPECT_NE(child.port(), picked);
  EXPECT_TRUE(ListensOn(child.pid(), child.port()));
  RawConnection c(child.port());
  const std::string info = c.Command("INFO", "server");
  EXPECT_NE(info.find("\r\nprocess_id:" + std::to_string(child.pid()) + "\r\n"), std::string::npos)
      << info;
  // A restart keeps the port it serves on.
  const int serving = child.port();
  child.Kill9();
  ASSERT_TRUE(child.Start()) << child.Log();
  EXPECT_EQ(child.port(), serving);
}

}  // namespace
}  // namespace latch::test
