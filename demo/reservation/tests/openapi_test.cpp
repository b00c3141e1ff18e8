// /openapi.json against the service: it documents exactly the routes the router serves, and
// each documented operation, called for real, answers a documented status with a body that
// has the documented schema's required fields.
#include <map>
#include <set>
#include <string>
#include <utility>

#include "adapters/http_api.h"
#include "adapters/pg_store.h"
#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

namespace json = boost::json;

class OpenApiTest : public DemoTest {};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The schema a "$ref" names, or the schema itself.
const json::object* Resolve(const json::object& spec, const json::value& schema) {
  if (!schema.is_object()) return nullptr;
  const json::object& s = schema.as_object();
  const json::value* ref = s.if_contains("$ref");
  if (ref == nullptr) return &s;
  std::string name(ref->as_string());
  name = name.substr(name.rfind('/') + 1);
  const json::value* target = spec.at("components").at("schemas").as_object().if_contains(name);
  return target != nullptr && target->is_object() ? &target->as_object() : nullptr;
}

TEST_P(OpenApiTest, DescribesExactlyTheRoutesServed) {
  int port = StartService();
  ASSERT_NE(port, 0);
  HttpReply served = HttpCall(port, "GET", "/openapi.json");
  ASSERT_EQ(served.status, 200);
  json::value spec = ParseJson(served.body);
  ASSERT_TRUE(spec.is_object()) << "not JSON";
  EXPECT_EQ(StringField(spec, "openapi").substr(0, 2), "3.");

  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, item] : spec.at("paths").as_object()) {
    for (const auto& [method, op] : item.as_object()) {
      documented.emplace(Upper(std::string(method)), std::string(path));
    }
  }
  // The router's own table (no database is reached to list it).
  PgPool pool(conninfo(), 1, std::chrono::milliseconds(100));
  PgStore store(pool);
  ReservationService service(store, nullptr, std::chrono::minutes(15));
  HttpApi api(service, store, nullptr);
  std::set<std::pair<std::string, std::string>> routed;
  for (const RouteInfo& r : api.Routes()) routed.emplace(r.method, r.path);
  EXPECT_EQ(documented, routed);
}

TEST_P(OpenApiTest, EveryOperationAnswersAsDocumented) {
  int port = StartService();
  ASSERT_NE(port, 0);
  json::value spec_value = ParseJson(HttpCall(port, "GET", "/openapi.json").body);
  ASSERT_TRUE(spec_value.is_object());
  const json::object& spec = spec_value.as_object();
  std::int64_t event = CreateEvent(port, 5);
  ASSERT_GT(event, 0);
  HttpReply held = Reserve(port, event, "spec", {2});
  ASSERT_EQ(held.status, 201);
  const std::string reservation = std::to_string(IntField(ParseJson(held.body), "id"));

  // A real request for every operation; an operation without one fails the test, so that a
  // new route cannot go undocumented here either.
  const std::map<std::string, std::string> bodies = {
      {"POST /events", R"({"name":"spec","seats":3})"},
      {"POST /events/{id}/reservations", R"({"user":"spec","seats":[3]})"},
  };
  int checked = 0;
  for (const auto& [path_key, item] : spec.at("paths").as_object()) {
    const std::string path(path_key);
    for (const auto& [method_key, op] : item.as_object()) {
      const std::string method = Upper(std::string(method_key));
      std::string target = path;
      if (auto at = target.find("{id}"); at != std::string::npos) {
        target.replace(at, 4, path.rfind("/reservations/", 0) == 0 ? reservation
                                                                   : std::to_string(event));
      }
      auto body = bodies.find(method + " " + path);
      HttpReply reply = HttpCall(port, method, target, body == bodies.end() ? "" : body->second);
      const std::string what = method + " " + target + " -> " + std::to_string(reply.status);
      const json::object& responses = op.at("responses").as_object();
      const json::value* documented = responses.if_contains(std::to_string(reply.status));
      ASSERT_NE(documented, nullptr) << what << " is not a documented status: " << reply.body;
      ++checked;
      const json::value* content = documented->as_object().if_contains("content");
      ASSERT_NE(content, nullptr) << what;
      const json::value* as_json = content->as_object().if_contains("application/json");
      if (as_json == nullptr) continue;  // the page (text/html)
      EXPECT_EQ(reply.header("content-type").rfind("application/json", 0), 0u) << what;
      json::value got = ParseJson(reply.body);
      ASSERT_TRUE(got.is_object()) << what << ": " << reply.body;
      const json::object* schema = Resolve(spec, as_json->at("schema"));
      ASSERT_NE(schema, nullptr) << what;
      if (const json::value* required = schema->if_contains("required")) {
        for (const json::value& field : required->as_array()) {
          EXPECT_TRUE(got.as_object().contains(field.as_string()))
              << what << ": no \"" << field.as_string().c_str() << "\" in " << reply.body;
        }
      }
    }
  }
  EXPECT_GE(checked, 13);
}

// The description does not depend on the lock server: one backend is enough.
INSTANTIATE_TEST_SUITE_P(Backends, OpenApiTest, ::testing::Values(LockBackend::kLatchd),
                         BackendName);

}  // namespace
}  // namespace latch::demo::test
