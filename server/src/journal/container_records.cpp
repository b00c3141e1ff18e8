#include "journal/container_records.h"

#include <charconv>
#include <vector>

#include "store/float_text.h"
#include "store/hash_ops.h"
#include "store/key_ops.h"
#include "latch/protocol/case_fold.h"
#include "latch/protocol/int_parse.h"
#include "latch/protocol/request_encoder.h"
#include "store/shard_guard.h"
#include "store/zset_ops.h"

namespace latch::journal {
namespace {

// The request encoder's framing: a record is a RESP command, as a client sends it.
void Header(std::string* out, std::size_t n) { protocol::AppendMultibulkHeader(out, n); }
void Bulk(std::string* out, std::string_view s) { protocol::AppendBulkArgument(out, s); }

void EncodeHash(std::string* out, std::string_view key, const store::HashValue& h) {
  Header(out, 2 + 2 * h.size());
  Bulk(out, "HSET");
  Bulk(out, key);
  h.ForEach([&](std::string_view f, std::string_view v) {
    Bulk(out, f);
    Bulk(out, v);
  });
}

void EncodeZSet(std::string* out, std::string_view key, const store::ZSetValue& z) {
  Header(out, 2 + 2 * z.size());
  Bulk(out, "ZADD");
  Bulk(out, key);
  for (const auto* n = z.First(); n != nullptr; n = n->next()) {
    Bulk(out, store::FormatDouble(n->score()));
    Bulk(out, n->member());
  }
}

store::KeyRef RefFor(store::Keyspace& ks, std::string_view key) {
  const std::uint64_t hash = store::HashKey(key);
  return store::KeyRef{key, hash, &ks.ShardFor(hash)};
}

}  // namespace

void EncodeContainer(std::string* out, const store::Object& o, std::int64_t deadline_wall_ms) {
  out->append("*1\r\n$5\r\nMULTI\r\n");
  Header(out, 2);
  Bulk(out, "DEL");
  Bulk(out, o.key());
  const store::Container* c = o.container();
  if (c->type() == store::ObjectType::kHash) {
    EncodeHash(out, o.key(), *static_cast<const store::HashValue*>(c));
  } else {
    EncodeZSet(out, o.key(), *static_cast<const store::ZSetValue*>(c));
  }
  if (deadline_wall_ms > 0) {
    Header(out, 3);
    Bulk(out, "PEXPIREAT");
    Bulk(out, o.key());
    Bulk(out, std::to_string(deadline_wall_ms));
  }
  out->append("*1\r\n$4\r\nEXEC\r\n");
}

bool ApplyContainerRecord(store::Keyspace& ks, std::span<const std::string_view> a,
                          const TimeSnapshot& now) {
  const std::string_view cmd = a[0];
  const store::OpEnv env{now};
  if (EqualsNoCase(cmd, "hset") && a.size() >= 4 && a.size() % 2 == 0) {
    const store::KeyRef k = RefFor(ks, a[1]);
    store::ShardGuard lock(*k.shard);
    std::int64_t added = 0;
    return store::OpHSet(k, a.subspan(2), false, env, &added) == store::OpStatus::kOk;
  }
  if (EqualsNoCase(cmd, "zadd") && a.size() >= 4 && a.size() % 2 == 0) {
    std::vector<store::ScoredMember> elems;
    for (std::size_t i = 2; i < a.size(); i += 2) {
      double score;
      if (!store::ParseDouble(a[i], &score)) return false;
      elems.push_back({score, a[i + 1]});
    }
    const store::KeyRef k = RefFor(ks, a[1]);
    store::ShardGuard lock(*k.shard);
    store::ZAddResult r;
    return store::OpZAdd(k, elems, store::ZAddParams{}, env, &r) == store::OpStatus::kOk;
  }
  if (EqualsNoCase(cmd, "pexpireat") && a.size() == 3) {
    std::int64_t wall_ms = 0;
    if (!ParseInt64(a[2], &wall_ms)) return false;
    const store::KeyRef k = RefFor(ks, a[1]);
    store::ShardGuard lock(*k.shard);
    // A deadline that passed while the server was down deletes the key (OpExpire's rule).
    store::OpExpire(k, store::ExpireParams{.deadline_ms = wall_ms <= 0 ? 1 : now.WallToMono(wall_ms)},
                    env);
    return true;
  }
  return false;
}

}  // namespace latch::journal
