#include "demo_fixture.h"

#include <libpq-fe.h>

#include <boost/json/parse.hpp>

namespace latch::demo::test {

std::string BackendName(const ::testing::TestParamInfo<LockBackend>& info) {
  return info.param == LockBackend::kRedis ? "redis" : "latchd";
}

void DemoTest::SetUp() {
  PostgresServer* pg = SharedPostgres();
  ASSERT_NE(pg, nullptr);
  ASSERT_TRUE(pg->ok()) << pg->error();
  database_ = pg->CreateDatabase();
  ASSERT_FALSE(database_.empty()) << pg->error();
  if (latchd()) {
    lock_server_ = std::make_unique<latch::test::LatchdProcess>(
        std::vector<std::string>{"--io-threads", "1", "--loglevel", "warning"});
  } else {
    lock_server_ = std::make_unique<latch::test::RedisServerProcess>();
  }
  ASSERT_TRUE(lock_server_->ok()) << lock_server_->error();
}

void DemoTest::TearDown() {
  services_.clear();  // stop every instance before its database and lock server go
  lock_server_.reset();
  if (!database_.empty() && SharedPostgres() != nullptr) SharedPostgres()->DropDatabase(database_);
}

std::string DemoTest::conninfo() const { return SharedPostgres()->Conninfo(database_); }

std::string DemoTest::lock_url() const {
  return "redis://127.0.0.1:" + std::to_string(lock_server_->port());
}

ServiceOptions DemoTest::Options() const {
  ServiceOptions o;
  o.port = 0;
  o.pg_conninfo = conninfo();
  o.lock_url = lock_url();
  o.sweep_interval = std::chrono::milliseconds(0);
  o.workers = 16;
  o.pg_pool = 8;
  o.access_log = nullptr;  // the access log test gives its own file
  return o;
}

int DemoTest::StartService(const ServiceOptions& options) {
  auto service = std::make_unique<Service>(options);
  int port = 0;
  try {
    port = service->Start();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "service did not start: " << e.what();
    return 0;
  }
  services_.push_back(std::move(service));
  return port;
}

std::int64_t DemoTest::CreateEvent(int port, int seats) {
  HttpReply r = HttpCall(port, "POST", "/events",
                         R"({"name":"concert","seats":)" + std::to_string(seats) + "}");
  EXPECT_EQ(r.status, 201) << r.error << r.body;
  if (r.status != 201) return 0;
  return IntField(ParseJson(r.body), "id");
}

HttpReply DemoTest::Reserve(int port, std::int64_t event, const std::string& user,
                            const std::vector<int>& seats, const Headers& headers) {
  std::string body = R"({"user":")" + user + R"(","seats":[)";
  for (std::size_t i = 0; i < seats.size(); ++i) {
    if (i) body += ",";
    body += std::to_string(seats[i]);
  }
  body += "]}";
  return HttpCall(port, "POST", "/events/" + std::to_string(event) + "/reservations", body,
                  headers);
}

std::int64_t DemoTest::QueryInt(const std::string& sql) const {
  PGconn* conn = PQconnectdb((conninfo() + " connect_timeout=5").c_str());
  std::int64_t value = -1;
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot connect: " << PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(r);
    } else {
      value = std::strtoll(PQgetvalue(r, 0, 0), nullptr, 10);
    }
    PQclear(r);
  }
  PQfinish(conn);
  return value;
}

boost::json::value ParseJson(const std::string& body) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  return ec ? boost::json::value() : v;
}

std::string ErrorCodeOf(const HttpReply& reply) {
  return StringField(ParseJson(reply.body), "error");
}

std::int64_t IntField(const boost::json::value& v, const char* name) {
  if (!v.is_object()) return -1;
  const auto* f = v.as_object().if_contains(name);
  return f != nullptr && f->is_int64() ? f->as_int64() : -1;
}

std::string StringField(const boost::json::value& v, const char* name) {
  if (!v.is_object()) return "";
  const auto* f = v.as_object().if_contains(name);
  return f != nullptr && f->is_string() ? std::string(f->as_string()) : "";
}

}  // namespace latch::demo::test
