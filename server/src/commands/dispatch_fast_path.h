#pragma once
// Dispatch's fast path (commands/command_table.cpp): a pipeline repeats one command from an
// ordinary client on an ordinary server, and such a request should cost a few compares
// before its handler runs. Two helpers, both inline:
// - LastCommandCache: the command this thread dispatched last, its name kept as two 64-bit
//   words, so that a repeat is recognised with two loads and two compares (no case folding
//   loop, no hash, no probe);
// - Ordinary(): true when none of Dispatch's refusals or diversions can apply (no MULTI, no
//   AUTH pending, no RESP2 subscriber, an allow-all ACL user; not loading, no maxmemory, no
//   busy script, no CLIENT PAUSE, no fault injection, no journal write error, not a cluster
//   node). Then every check Dispatch makes would pass, and it skips them; otherwise it runs
//   them all, in Redis's order.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "commands/acl_gate.h"
#include "commands/arg_parse.h"
#include "commands/command_table.h"

namespace latch::dispatch {

// Up to 16 bytes of a name as two words: the first and last 8 bytes (or 4, or 2, or 1),
// overlapping for lengths in between, so that every byte lands in a word and nothing is read
// past the name. Names of the same length map byte to byte onto the same bit positions.
struct NameWords {
  std::uint64_t lo = 0, hi = 0;
};
inline constexpr std::size_t kMaxPackedName = 16;

inline NameWords Pack(const char* p, std::size_t n) {
  NameWords w;
  if (n >= 8) {
    std::memcpy(&w.lo, p, 8);
    std::memcpy(&w.hi, p + n - 8, 8);
  } else if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w.lo = a | (std::uint64_t{b} << 32);
  } else if (n >= 2) {
    std::uint16_t a, b;
    std::memcpy(&a, p, 2);
    std::memcpy(&b, p + n - 2, 2);
    w.lo = a | (std::uint64_t{b} << 16);
  } else if (n == 1) {
    w.lo = static_cast<unsigned char>(p[0]);
  }
  return w;
}

// The command this thread dispatched last: a top-level spec of the table whose specs were at
// `base` (`count` of them). A byte x of the request matches the lowercase name byte c when
// (x | m) == c, m being 0x20 where c is a letter and 0 elsewhere: exactly EqualsNoCase's
// ASCII folding.
struct LastCommand {
  const CommandSpec* base = nullptr;
  std::size_t count = 0;
  const CommandSpec* spec = nullptr;
  std::size_t len = 0;
  NameWords name, letters;
};
inline constinit thread_local LastCommand t_last_command;

inline void Remember(std::span<const CommandSpec> specs, const CommandSpec* spec) {
  LastCommand& c = t_last_command;
  c.base = specs.data();
  c.count = specs.size();
  c.spec = spec;
  c.len = spec->name.size();
  if (c.len > kMaxPackedName) return;  // compared with EqualsNoCase instead
  char letters[kMaxPackedName];
  for (std::size_t i = 0; i < c.len; ++i) {
    const char ch = spec->name[i];
    letters[i] = ch >= 'a' && ch <= 'z' ? 0x20 : 0;
  }
  c.name = Pack(spec->name.data(), c.len);
  c.letters = Pack(letters, c.len);
}

// The remembered spec when `name` is its name (any case), else null. The same base and count
// keep the remembered pointer inside `specs`; its live name is compared too, so a table freed
// and another built at the same address cannot be answered with a stale command.
inline const CommandSpec* Recall(std::span<const CommandSpec> specs, std::string_view name) {
  const LastCommand& c = t_last_command;
  if (c.base != specs.data() || c.count != specs.size() || name.size() != c.len) return nullptr;
  const std::string& live = c.spec->name;
  if (live.size() != c.len) return nullptr;
  if (c.len > kMaxPackedName) [[unlikely]]
    return EqualsNoCase(name, live) ? c.spec : nullptr;
  const NameWords w = Pack(name.data(), c.len);
  const NameWords l = Pack(live.data(), c.len);
  const bool same = l.lo == c.name.lo && l.hi == c.name.hi &&
                    ((w.lo | c.letters.lo) ^ c.name.lo) == 0 &&
                    ((w.hi | c.letters.hi) ^ c.name.hi) == 0;
  return same ? c.spec : nullptr;
}

// True when Dispatch may run `spec` without its checks: each condition here is the negation
// of one check's trigger in CheckUnusual, commands/command_table.cpp (keep them in step).
inline bool Ordinary(const CommandSpec& spec, const CommandContext& ctx) {
  const Session& s = ctx.session;
  const ServerState& st = ctx.server;
  const bool ordinary_spec = !spec.IsContainer() && spec.handler != nullptr &&
                             (spec.arity > 0 ? ctx.argc() == static_cast<std::size_t>(spec.arity)
                                             : ctx.argc() >= static_cast<std::size_t>(-spec.arity));
  const bool ordinary_session =
      s.authenticated && !s.in_multi && s.subscriptions == 0 && acl::AllowsAll(ctx);
  // Bitwise ORs: seven loads and one branch. A cluster node (reply_log, set before any worker
  // runs) checks every command: its role gates reads and writes, and reads are fenced.
  const bool unusual_server = (st.reply_log != nullptr) |
                              st.loading.load(std::memory_order_relaxed) |
                              st.script_busy.load(std::memory_order_relaxed) | st.faults.active() |
                              (st.client_pause_type.load(std::memory_order_relaxed) != 0) |
                              (st.maxmemory.load(std::memory_order_relaxed) > 0) |
                              (st.journal_write_errno.load(std::memory_order_relaxed) != 0);
  return ordinary_spec && ordinary_session && !unusual_server;
}

}  // namespace latch::dispatch
