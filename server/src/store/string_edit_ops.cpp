#include "store/string_edit_ops.h"

#include <cmath>
#include <string>

#include "store/float_text.h"

namespace latch::store {

OpStatus OpAppend(const KeyRef& k, std::string_view suffix, std::size_t max_len,
                  const OpEnv& env, std::int64_t* len) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o != nullptr && o->is_container()) return OpStatus::kWrongType;
  const std::string_view cur = o != nullptr ? o->value() : std::string_view();
  if (cur.size() + suffix.size() > max_len) return OpStatus::kOverflow;
  std::string next;
  next.reserve(cur.size() + suffix.size());
  next.append(cur).append(suffix);
  k.shard->Put(o, k.key, k.hash, next, o != nullptr ? Expiry::Keep() : Expiry::Clear());
  *len = static_cast<std::int64_t>(next.size());
  return OpStatus::kOk;
}

OpStatus OpSetRange(const KeyRef& k, std::size_t offset, std::string_view data,
                    std::size_t max_len, const OpEnv& env, std::int64_t* len) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o != nullptr && o->is_container()) return OpStatus::kWrongType;
  const std::string_view cur = o != nullptr ? o->value() : std::string_view();
  if (data.empty()) {
    *len = static_cast<std::int64_t>(cur.size());
    return OpStatus::kOk;
  }
  if (offset + data.size() > max_len) return OpStatus::kOverflow;
  std::string next(cur);
  if (next.size() < offset + data.size()) next.resize(offset + data.size(), '\0');
  next.replace(offset, data.size(), data);
  k.shard->Put(o, k.key, k.hash, next, o != nullptr ? Expiry::Keep() : Expiry::Clear());
  *len = static_cast<std::int64_t>(next.size());
  return OpStatus::kOk;
}

OpStatus OpIncrByFloat(const KeyRef& k, long double delta, const OpEnv& env, std::string* out) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o != nullptr && o->is_container()) return OpStatus::kWrongType;
  long double cur = 0;
  if (o != nullptr && !ParseLongDouble(o->value(), &cur)) return OpStatus::kNotFloat;
  const long double next = cur + delta;
  if (std::isnan(next) || std::isinf(next)) return OpStatus::kOverflow;
  *out = FormatLongDouble(next);
  k.shard->Put(o, k.key, k.hash, *out, o != nullptr ? Expiry::Keep() : Expiry::Clear());
  return OpStatus::kOk;
}

}  // namespace latch::store
