// Redisson's RedissonLock scripts (lock, unlock, watchdog renewal), their texts as
// Redisson 3 sends them (org/redisson/RedissonLock.java: tryLockInnerAsync,
// unlockInnerAsync, renewExpirationAsync), driven over the wire the way Redisson drives
// them: two owners (uuid:thread), reentrancy, renewal, a refused unlock, and a waiter on a
// third connection subscribed to the lock's channel, woken by the unlock's PUBLISH. Every
// reply is compared with redis-server's, byte for byte except a PTTL's value (real time
// passes differently), which must be in (0, lease].
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

constexpr const char* kLockScript =
    "if (redis.call('exists', KEYS[1]) == 0) then "
    "redis.call('hset', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);";

constexpr const char* kUnlockScript =
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then "
    "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then "
    "redis.call('pexpire', KEYS[1], ARGV[2]); "
    "return 0; "
    "else "
    "redis.call('del', KEYS[1]); "
    "redis.call('publish', KEYS[2], ARGV[1]); "
    "return 1; "
    "end; "
    "return nil;";

constexpr const char* kRenewScript =
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return 1; "
    "end; "
    "return 0;";

constexpr const char* kLock = "orders";
constexpr const char* kChannel = "redisson_lock__channel:{orders}";
constexpr const char* kLease = "30000";
constexpr const char* kOwnerA = "6f1c-uuid-a:1";
constexpr const char* kOwnerB = "9e2d-uuid-b:7";

// A PTTL reply, integer in (0, lease], stands for itself as ":pttl".
std::string Normalize(const std::string& reply) {
  if (reply.size() > 3 && reply[0] == ':' && reply[1] != '-') {
    const long long v = std::stoll(reply.substr(1));
    if (v > 1 && v <= 30000) return ":pttl\r\n";
  }
  return reply;
}

std::vector<std::string> RedissonSession(int port) {
  RawConnection a(port), b(port), waiter(port);
  std::vector<std::string> r;
  auto eval_lock = [&](RawConnection& c, const char* owner) {
    return c.Command("EVAL", kLockScript, "1", kLock, kLease, owner);
  };
  auto eval_unlock = [&](RawConnection& c, const char* owner) {
    return c.Command("EVAL", kUnlockScript, "2", kLock, kChannel, "0", kLease, owner);
  };
  auto eval_renew = [&](RawConnection& c, const char* owner) {
    return c.Command("EVAL", kRenewScript, "1", kLock, kLease, owner);
  };
  r.push_back(eval_lock(a, kOwnerA));  // nil: taken
  r.push_back(eval_lock(a, kOwnerA));  // nil: reentered
  r.push_back(Normalize(eval_lock(b, kOwnerB)));  // the holder's PTTL
  // B waits as Redisson does: subscribe to the lock's channel, retry on a message.
  r.push_back(waiter.Command("SUBSCRIBE", kChannel));
  r.push_back(a.Command("HGET", kLock, kOwnerA));  // hold count 2
  r.push_back(a.Command("HEXISTS", kLock, kOwnerB));
  r.push_back(eval_renew(a, kOwnerA));  // the watchdog: 1
  r.push_back(eval_renew(b, kOwnerB));  // not the owner: 0
  r.push_back(Normalize(a.Command("PTTL", kLock)));
  r.push_back(eval_unlock(b, kOwnerB));  // not the owner: nil
  r.push_back(eval_unlock(a, kOwnerA));  // 0: still held once
  r.push_back(a.Command("TYPE", kLock));
  r.push_back(eval_unlock(a, kOwnerA));  // 1: released and published
  r.push_back(waiter.ReadReply().value_or("<no message>"));
  r.push_back(eval_lock(b, kOwnerB));  // the woken waiter takes it
  r.push_back(b.Command("HGET", kLock, kOwnerB));
  r.push_back(eval_unlock(b, kOwnerB));
  r.push_back(waiter.ReadReply().value_or("<no message>"));
  r.push_back(a.Command("EXISTS", kLock));
  r.push_back(eval_unlock(a, kOwnerA));  // nothing held: nil
  return r;
}

// The hash commands the scripts use; latchd gains them with the hash type (issue 17).
std::string MissingHashCommand(int port) {
  RawConnection c(port);
  for (const char* cmd : {"HSET", "HEXISTS", "HINCRBY", "HGET"}) {
    const std::vector<std::string> args = {cmd, "redisson:probe", "f", "1"};
    const std::string reply = c.CommandArgs(
        std::vector<std::string>(args.begin(), args.begin() + (cmd[1] == 'S' || cmd[1] == 'I' ? 4 : 3)));
    if (reply.starts_with("-ERR unknown command")) return cmd;
  }
  c.Command("DEL", "redisson:probe");
  return "";
}

TEST(RedissonLockWire, LockUnlockRenewRepliesMatchRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  const std::vector<std::string> want = RedissonSession(redis.port());
  ASSERT_EQ(want[2], ":pttl\r\n") << "the test itself is off against Redis";
  if (const std::string missing = MissingHashCommand(latchd.port()); !missing.empty()) {
    GTEST_SKIP() << "latchd lacks '" << missing
                 << "' (hashes come from the types branch): enable at merge";
  }
  const std::vector<std::string> got = RedissonSession(latchd.port());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "step " << i;
}

}  // namespace
}  // namespace latch::test
