#include "store/hash_ops.h"

#include <cmath>
#include <memory>

#include "latch/protocol/int_parse.h"
#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/int_increment.h"

namespace latch::store {
namespace {

// Sets one field, creating the key when it is missing (the TTL of an existing key stays).
void SetField(const KeyRef& k, Object* o, HashValue* h, std::string_view field,
              std::string_view value) {
  if (h != nullptr) {
    h->Set(field, value);
    k.shard->Changed(o, k.hash);
    return;
  }
  auto fresh = std::make_unique<HashValue>();
  fresh->Set(field, value);
  k.shard->PutContainer(nullptr, k.key, k.hash, std::move(fresh), Expiry::Clear());
}

}  // namespace

OpStatus OpHSet(const KeyRef& k, std::span<const std::string_view> pairs, bool nx,
                const OpEnv& env, std::int64_t* added) {
  Object* o;
  HashValue* h;
  if (OpStatus s = FindContainer(k, env, &o, &h); s != OpStatus::kOk) return s;
  *added = 0;
  if (nx && h != nullptr && h->Has(pairs[0])) return OpStatus::kNotMet;
  std::unique_ptr<HashValue> fresh;
  HashValue* target = h;
  if (target == nullptr) {
    fresh = std::make_unique<HashValue>();
    target = fresh.get();
  }
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
    if (target->Set(pairs[i], pairs[i + 1])) ++*added;
  }
  // One key event for the whole command.
  if (fresh) {
    k.shard->PutContainer(nullptr, k.key, k.hash, std::move(fresh), Expiry::Clear());
  } else {
    k.shard->Changed(o, k.hash);
  }
  return OpStatus::kOk;
}

OpStatus OpHDel(const KeyRef& k, std::span<const std::string_view> fields, const OpEnv& env,
                std::int64_t* removed) {
  Object* o;
  HashValue* h;
  *removed = 0;
  if (OpStatus s = FindContainer(k, env, &o, &h); s != OpStatus::kOk || h == nullptr) return s;
  for (std::string_view f : fields) {
    if (h->Erase(f)) ++*removed;
    if (h->size() == 0) break;
  }
  if (*removed > 0) AfterChange(k, o, *h);
  return OpStatus::kOk;
}

OpStatus OpHIncrBy(const KeyRef& k, std::string_view field, std::int64_t delta, const OpEnv& env,
                   std::int64_t* out) {
  Object* o;
  HashValue* h;
  if (OpStatus s = FindContainer(k, env, &o, &h); s != OpStatus::kOk) return s;
  std::int64_t cur = 0;
  if (std::string_view v; h != nullptr && h->Get(field, &v)) {
    if (!ParseInt64(v, &cur)) return OpStatus::kNotInteger;
  }
  if (!AddWithoutOverflow(cur, delta, out)) return OpStatus::kOverflow;
  SetField(k, o, h, field, Int64Text(*out).view());
  return OpStatus::kOk;
}

OpStatus OpHIncrByFloat(const KeyRef& k, std::string_view field, long double delta,
                        const OpEnv& env, std::string* out) {
  Object* o;
  HashValue* h;
  if (OpStatus s = FindContainer(k, env, &o, &h); s != OpStatus::kOk) return s;
  long double cur = 0;
  if (std::string_view v; h != nullptr && h->Get(field, &v)) {
    if (!ParseLongDouble(v, &cur)) return OpStatus::kNotFloat;
  }
  const long double next = cur + delta;
  if (std::isnan(next) || std::isinf(next)) return OpStatus::kOverflow;
  *out = FormatLongDouble(next);
  SetField(k, o, h, field, *out);
  return OpStatus::kOk;
}

}  // namespace latch::store
