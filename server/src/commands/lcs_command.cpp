// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common subsequence
// of two strings, by Redis 7.0's dynamic programming table (so that among equally long
// answers the same one is chosen) with its limits, errors and reply shapes (IDX: a map of
// "matches", walked from the strings' ends, and "len").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"

namespace latch {
namespace {

struct LcsArgs {
  bool len = false, idx = false, withmatchlen = false;
  std::int64_t minmatchlen = 0;
};

bool ParseLcsArgs(CommandContext& ctx, LcsArgs* a) {
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (EqualsNoCase(ctx.arg(j), "idx")) {
      a->idx = true;
    } else if (EqualsNoCase(ctx.arg(j), "len")) {
      a->len = true;
    } else if (EqualsNoCase(ctx.arg(j), "withmatchlen")) {
      a->withmatchlen = true;
    } else if (EqualsNoCase(ctx.arg(j), "minmatchlen") && more) {
      if (!ParseInt64(ctx.arg(j + 1), &a->minmatchlen)) {
        ctx.out.Error(errors::kNotInteger);
        return false;
      }
      if (a->minmatchlen < 0) a->minmatchlen = 0;
      ++j;
    } else {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  if (a->len && a->idx) {
    ctx.out.Error("ERR If you want both the length and indexes, please just use IDX.");
    return false;
  }
  return true;
}

// One match range of the IDX reply, in a's and b's coordinates (inclusive).
struct Range {
  std::uint32_t a_start, a_end, b_start, b_end;
};

void LcsCommand(CommandContext& ctx) {
  std::string_view av, bv;
  for (int i = 0; i < 2; ++i) {
    const KeyRef& k = ctx.key(static_cast<std::size_t>(i));
    const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
    if (o != nullptr && o->is_container()) {
      return ctx.out.Error("ERR The specified keys must contain string values");
    }
    (i == 0 ? av : bv) = o != nullptr ? o->value() : std::string_view();
  }
  // Copies: the table below may take a while and the views point into the shards' slabs,
  // which stay locked anyway; copying keeps the loop simple to reason about.
  const std::string a(av), b(bv);
  LcsArgs args;
  if (!ParseLcsArgs(ctx, &args)) return;
  const std::uint64_t alen = a.size(), blen = b.size();
  const std::uint64_t cells = (alen + 1) * (blen + 1);
  if (cells * sizeof(std::uint32_t) >
      static_cast<std::uint64_t>(ctx.server.proto_max_bulk_len.load(std::memory_order_relaxed))) {
    return ctx.out.Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::vector<std::uint32_t> t(cells, 0);
  auto at = [&](std::uint64_t i, std::uint64_t j) -> std::uint32_t& { return t[j + i * (blen + 1)]; };
  for (std::uint64_t i = 1; i <= alen; ++i) {
    for (std::uint64_t j = 1; j <= blen; ++j) {
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  const std::uint32_t total = at(alen, blen);
  if (args.len) return ctx.out.Integer(total);
  // Walk back from the ends, collecting the subsequence and the contiguous ranges.
  std::string result(total, '\0');
  std::vector<Range> ranges;
  std::uint32_t idx = total;
  auto i = static_cast<std::uint32_t>(alen), j = static_cast<std::uint32_t>(blen);
  bool open = false;
  Range cur{};
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      result[idx - 1] = a[i - 1];
      if (!open) {
        cur = {i - 1, i - 1, j - 1, j - 1};
        open = true;
      } else if (cur.a_start == i && cur.b_start == j) {
        --cur.a_start;
        --cur.b_start;
      } else {
        emit = true;
      }
      if (cur.a_start == 0 || cur.b_start == 0) emit = true;
      --idx, --i, --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (open) emit = true;
    }
    if (emit) {
      const std::uint32_t match_len = cur.a_end - cur.a_start + 1;
      if (args.minmatchlen == 0 || match_len >= args.minmatchlen) ranges.push_back(cur);
      open = false;
    }
  }
  if (!args.idx) return ctx.out.Bulk(result);
  ctx.out.MapHeader(2);
  ctx.out.Bulk("matches");
  ctx.out.ArrayHeader(ranges.size());
  for (const Range& r : ranges) {
    ctx.out.ArrayHeader(args.withmatchlen ? 3 : 2);
    ctx.out.ArrayHeader(2);
    ctx.out.Integer(r.a_start);
    ctx.out.Integer(r.a_end);
    ctx.out.ArrayHeader(2);
    ctx.out.Integer(r.b_start);
    ctx.out.Integer(r.b_end);
    if (args.withmatchlen) ctx.out.Integer(r.a_end - r.a_start + 1);
  }
  ctx.out.Bulk("len");
  ctx.out.Integer(total);
}

}  // namespace

void RegisterLcsCommand(CommandTable& t) {
  t.Add({.name = "lcs", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 2,
         .key_step = 1, .handler = LcsCommand, .group = "string",
         .summary = "Finds the longest common substring.", .since = "7.0.0"});
}

}  // namespace latch
