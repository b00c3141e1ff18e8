#include "store/string_edit_ops.h"

#include <string>

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

}  // namespace latch::store
