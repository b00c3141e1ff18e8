#include "metrics/keyspace_info.h"

#include <string>

#include "store/keyspace.h"
#include "store/keyspace_set.h"

namespace latch {

void AppendKeyspaceInfo(store::KeyspaceSet& dbs, std::string* s) {
  dbs.ForEachDb([s](int db, store::Keyspace& ks) {
    const std::size_t keys = ks.TotalKeys();
    if (keys == 0) return;
    s->append("db" + std::to_string(db) + ":keys=" + std::to_string(keys) +
              ",expires=" + std::to_string(ks.TotalExpires()) + ",avg_ttl=0\r\n");
  });
}

void AppendDbMetrics(store::KeyspaceSet& dbs, std::string* out) {
  std::string keys, expiring;
  dbs.ForEachDb([&](int db, store::Keyspace& ks) {
    const std::size_t n = ks.TotalKeys();
    if (db != 0 && n == 0) return;  // DB 0 always, as the Redis exporter; others when used
    const std::string label = "{db=\"db" + std::to_string(db) + "\"} ";
    keys += "redis_db_keys" + label + std::to_string(n) + "\n";
    expiring += "redis_db_keys_expiring" + label + std::to_string(ks.TotalExpires()) + "\n";
  });
  out->append("# HELP redis_db_keys Total number of keys by DB\n# TYPE redis_db_keys gauge\n");
  out->append(keys);
  out->append(
      "# HELP redis_db_keys_expiring Total number of expiring keys by DB\n"
      "# TYPE redis_db_keys_expiring gauge\n");
  out->append(expiring);
}

}  // namespace latch
