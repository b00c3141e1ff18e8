// HRANDFIELD key [count [WITHVALUES]] and ZRANDMEMBER key [count [WITHSCORES]]: Redis 7.0's
// argument rules, errors and reply shapes. A negative count draws with repetition, a positive
// one draws distinct elements (the whole value, in its own order, when count >= its size).
// A hash is read into a vector of views first (linear in its size, small for the hashes lock
// libraries keep); a sorted set is indexed by rank.
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/reply_cap.h"
#include "commands/zset_reply.h"
#include "store/container_ops.h"
#include "store/hash_value.h"

namespace latch {
namespace {

constexpr std::int64_t kLongMax = std::numeric_limits<std::int64_t>::max();

struct RandomArgs {
  bool has_count = false;
  std::int64_t count = 0;
  bool with = false;  // WITHVALUES / WITHSCORES
};

// Parses what follows the key; replies the error and returns false.
bool ParseRandomArgs(CommandContext& ctx, std::string_view with_word, RandomArgs* a) {
  if (ctx.argc() < 3) return true;
  a->has_count = true;
  if (!ParseInt64(ctx.arg(2), &a->count)) {
    ctx.out.Error(errors::kNotInteger);
    return false;
  }
  if (a->count < -kLongMax) {
    ctx.out.Error(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
    return false;
  }
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsNoCase(ctx.arg(3), with_word))) {
    ctx.out.Error(errors::kSyntax);
    return false;
  }
  a->with = ctx.argc() == 4;
  // The reply holds two entries per element: a count past half the range cannot be served.
  if (a->with && (a->count < -kLongMax / 2 || a->count > kLongMax / 2)) {
    ctx.out.Error("ERR value is out of range");
    return false;
  }
  return true;
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

std::size_t RandomIndex(std::size_t size) {
  return std::uniform_int_distribution<std::size_t>(0, size - 1)(Rng());
}

// Replies the elements `count` picks out of `size` (> 0): emit(i) writes element i (one
// bulk, or two with `with`). RESP3 nests each element with its value in a pair. The reply
// stops at the client's output limit (reply_cap.h): with repetition, |count| may be 2^63.
template <class Emit>
void ReplyPicks(CommandContext& ctx, std::size_t size, const RandomArgs& a, Emit emit) {
  const ReplyCap cap(ctx);
  const bool pairs = a.with && ctx.session.proto >= 3;
  const bool uniq = a.count >= 0;
  const std::uint64_t count =
      uniq ? static_cast<std::uint64_t>(a.count) : static_cast<std::uint64_t>(-a.count);
  const std::uint64_t n = uniq && count > size ? size : count;
  ctx.out.ArrayHeader(a.with && !pairs ? n * 2 : n);
  // Writes element i; false once the reply reached the limit (nothing written then).
  auto one = [&](std::size_t i) {
    if (cap.Reached()) return false;
    if (pairs) ctx.out.ArrayHeader(2);
    emit(i);
    return true;
  };
  bool whole = true;
  if (!uniq) {
    for (std::uint64_t k = 0; k < n && whole; ++k) whole = one(RandomIndex(size));
  } else if (n == size) {
    for (std::size_t i = 0; i < size && whole; ++i) whole = one(i);
  } else {
    // Distinct picks: the first n steps of a Fisher-Yates shuffle.
    std::vector<std::size_t> order(size);
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (std::size_t k = 0; k < n && whole; ++k) {
      std::swap(order[k], order[k + RandomIndex(size - k)]);
      whole = one(order[k]);
    }
  }
  if (!whole) cap.Stop(ctx);
}

// The key's container for a read, or false after WRONGTYPE; *c null when missing.
template <class T>
bool ReadContainer(CommandContext& ctx, T** c) {
  store::Object* o;
  if (store::FindContainer(ctx.key(0), ctx.env(), &o, c) != store::OpStatus::kOk) {
    ctx.out.Error(errors::kWrongType);
    return false;
  }
  return true;
}

void HRandFieldCommand(CommandContext& ctx) {
  RandomArgs a;
  if (!ParseRandomArgs(ctx, "withvalues", &a)) return;
  store::HashValue* h;
  if (!ReadContainer(ctx, &h)) return;
  if (h == nullptr || (a.has_count && a.count == 0)) {
    return a.has_count ? ctx.out.ArrayHeader(0) : ctx.out.Null();
  }
  std::vector<std::pair<std::string_view, std::string_view>> all;
  all.reserve(h->size());
  h->ForEach([&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
  if (!a.has_count) return ctx.out.Bulk(all[RandomIndex(all.size())].first);
  ReplyPicks(ctx, all.size(), a, [&](std::size_t i) {
    ctx.out.Bulk(all[i].first);
    if (a.with) ctx.out.Bulk(all[i].second);
  });
}

void ZRandMemberCommand(CommandContext& ctx) {
  RandomArgs a;
  if (!ParseRandomArgs(ctx, "withscores", &a)) return;
  store::ZSetValue* z;
  if (!ReadContainer(ctx, &z)) return;
  if (z == nullptr || (a.has_count && a.count == 0)) {
    return a.has_count ? ctx.out.ArrayHeader(0) : ctx.out.Null();
  }
  // Element i is the member at descending rank i (Redis's order when it answers the whole
  // set), found through the skip list's spans in O(log n): no copy of the set.
  const std::size_t size = z->size();
  auto at = [&](std::size_t i) { return z->AtRank(size - 1 - i); };
  if (!a.has_count) return ctx.out.Bulk(at(RandomIndex(size))->member());
  ReplyPicks(ctx, size, a, [&](std::size_t i) {
    const store::ZSetValue::Node* n = at(i);
    ctx.out.Bulk(n->member());
    if (a.with) ctx.out.Double(n->score());
  });
}

}  // namespace

void RegisterRandomMemberCommands(CommandTable& t) {
  t.Add({.name = "hrandfield",
         .arity = -2,
         .flags = kCmdReadonly,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = HRandFieldCommand,
         .group = "hash",
         .summary = "Returns one or more random fields from a hash.",
         .since = "6.2.0"});
  t.Add({.name = "zrandmember",
         .arity = -2,
         .flags = kCmdReadonly,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = ZRandMemberCommand,
         .group = "sorted-set",
         .summary = "Returns one or more random members from a sorted set.",
         .since = "6.2.0"});
}

}  // namespace latch
