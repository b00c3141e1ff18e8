// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common subsequence
// of two strings, by Redis 7.0's dynamic programming table (so that among equally long
// answers the same one is chosen) with its limits, errors and reply shapes (IDX: a map of
// "matches", walked from the strings' ends, and "len").
#include <algorithm>
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

// Redis's table: t[j + i * (blen + 1)] is the LCS length of a[0..i) and b[0..j).
class LcsTable {
 public:
  LcsTable(std::string_view a, std::string_view b)
      : a_(a), b_(b), w_(b.size() + 1), t_((a.size() + 1) * w_, 0) {
    for (std::size_t i = 1; i <= a.size(); ++i) {
      for (std::size_t j = 1; j <= b.size(); ++j) {
        at(i, j) =
            a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
      }
    }
  }
  std::uint32_t length() const { return t_.back(); }

  // Walks back from the ends as Redis does: the subsequence into *out, and the ranges of
  // consecutive matches (at least minmatchlen long) into *ranges, last match first.
  void WalkBack(std::int64_t minmatchlen, std::string* out, std::vector<Range>* ranges) const {
    out->assign(length(), '\0');
    std::uint32_t idx = length();
    auto i = static_cast<std::uint32_t>(a_.size()), j = static_cast<std::uint32_t>(b_.size());
    bool open = false;
    Range cur{};
    while (i > 0 && j > 0) {
      bool emit = false;
      if (a_[i - 1] == b_[j - 1]) {
        (*out)[idx - 1] = a_[i - 1];
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
        if (minmatchlen == 0 || match_len >= minmatchlen) ranges->push_back(cur);
        open = false;
      }
    }
  }

 private:
  std::uint32_t& at(std::size_t i, std::size_t j) { return t_[j + i * w_]; }
  std::uint32_t at(std::size_t i, std::size_t j) const { return t_[j + i * w_]; }
  std::string_view a_, b_;
  std::size_t w_;
  std::vector<std::uint32_t> t_;
};

void ReplyIdx(CommandContext& ctx, const std::vector<Range>& ranges, bool withmatchlen,
              std::uint32_t total) {
  ctx.out.MapHeader(2);
  ctx.out.Bulk("matches");
  ctx.out.ArrayHeader(ranges.size());
  for (const Range& r : ranges) {
    ctx.out.ArrayHeader(withmatchlen ? 3 : 2);
    ctx.out.ArrayHeader(2);
    ctx.out.Integer(r.a_start);
    ctx.out.Integer(r.a_end);
    ctx.out.ArrayHeader(2);
    ctx.out.Integer(r.b_start);
    ctx.out.Integer(r.b_end);
    if (withmatchlen) ctx.out.Integer(r.a_end - r.a_start + 1);
  }
  ctx.out.Bulk("len");
  ctx.out.Integer(total);
}

void LcsCommand(CommandContext& ctx) {
  std::string_view v[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const KeyRef& k = ctx.key(i);
    const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
    if (o != nullptr && o->is_container()) {
      return ctx.out.Error("ERR The specified keys must contain string values");
    }
    v[i] = o != nullptr ? o->value() : std::string_view();
  }
  LcsArgs args;
  if (!ParseLcsArgs(ctx, &args)) return;
  // The views stay valid: the keys' shards are held for the whole command.
  const std::uint64_t cells = (v[0].size() + 1) * (v[1].size() + 1);
  if (cells * sizeof(std::uint32_t) >
      static_cast<std::uint64_t>(ctx.server.proto_max_bulk_len.load(std::memory_order_relaxed))) {
    return ctx.out.Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  const LcsTable table(v[0], v[1]);
  if (args.len) return ctx.out.Integer(table.length());
  std::string result;
  std::vector<Range> ranges;
  table.WalkBack(args.minmatchlen, &result, &ranges);
  if (!args.idx) return ctx.out.Bulk(result);
  ReplyIdx(ctx, ranges, args.withmatchlen, table.length());
}

}  // namespace

void RegisterLcsCommand(CommandTable& t) {
  t.Add({.name = "lcs",
         .arity = -3,
         .flags = kCmdReadonly,
         .first_key = 1,
         .last_key = 2,
         .key_step = 1,
         .handler = LcsCommand,
         .group = "string",
         .summary = "Finds the longest common substring.",
         .since = "7.0.0"});
}

}  // namespace latch
