// main() of latch_demo_tests: one PostgreSQL server for all tests (starting one costs seconds),
// each test then works in a database of its own.
#include <gtest/gtest.h>

#include <memory>

#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

std::unique_ptr<PostgresServer> g_postgres;

class PostgresEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_postgres = std::make_unique<PostgresServer>(LATCH_PG_BINDIR);
    ASSERT_TRUE(g_postgres->ok()) << g_postgres->error();
  }
  void TearDown() override { g_postgres.reset(); }
};

}  // namespace

PostgresServer* SharedPostgres() { return g_postgres.get(); }

}  // namespace latch::demo::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new latch::demo::test::PostgresEnvironment);
  return RUN_ALL_TESTS();
}
