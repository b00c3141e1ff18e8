#pragma once
// The fixture of every reservation test: one PostgreSQL server for the whole executable
// (started by the GoogleTest environment in demo_main.cpp), a fresh database per test, a
// lock server per test (a real redis-server or the latchd binary: the test parameter), and
// service instances on free ports.
#include <gtest/gtest.h>

#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http_client.h"
#include "postgres_server.h"
#include "service.h"
#include "support/server_process.h"

namespace latch::demo::test {

// The server started by the environment (null before it ran).
PostgresServer* SharedPostgres();

enum class LockBackend { kRedis, kLatchd };
std::string BackendName(const ::testing::TestParamInfo<LockBackend>& info);

class DemoTest : public ::testing::TestWithParam<LockBackend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  bool latchd() const { return GetParam() == LockBackend::kLatchd; }
  const std::string& database() const { return database_; }
  std::string conninfo() const;
  std::string lock_url() const;
  latch::test::ServerProcess& lock_server() { return *lock_server_; }

  // Options for a service on this test's database and lock server, on a free port.
  ServiceOptions Options() const;
  // Starts a service (stopped by TearDown); returns its port, 0 on failure (test failed).
  int StartService(const ServiceOptions& options);
  int StartService() { return StartService(Options()); }

  // Creates an event through the API; its id (0 and a test failure otherwise).
  std::int64_t CreateEvent(int port, int seats);
  // POST /events/{event}/reservations {"user": user, "seats": seats}.
  HttpReply Reserve(int port, std::int64_t event, const std::string& user,
                    const std::vector<int>& seats, const Headers& headers = {});

  // One integer from a query on this test's database (-1 and a test failure on error).
  std::int64_t QueryInt(const std::string& sql) const;

 private:
  std::string database_;
  std::unique_ptr<latch::test::ServerProcess> lock_server_;
  std::vector<std::unique_ptr<Service>> services_;
};

// The body as JSON (null on a parse error).
boost::json::value ParseJson(const std::string& body);
// body["error"] as a string, "" when absent.
std::string ErrorCodeOf(const HttpReply& reply);
std::int64_t IntField(const boost::json::value& v, const char* name);
std::string StringField(const boost::json::value& v, const char* name);

}  // namespace latch::demo::test
