#pragma once
// The command catalogue: every command's spec (catalogue/command_spec.h) and a
// case-insensitive lookup by name, with the subcommand of a container. No dispatch: what
// ACL, INFO commandstats, /metrics and COMMAND read, below the dispatcher and the handlers
// (commands/command_table.h registers the built-in commands and runs them).
#include <tsl/robin_map.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalogue/command_spec.h"

namespace latch {

class CommandCatalogue {
 public:
  // Throws std::logic_error past kMaxCommandIds commands and subcommands (a start-up bug).
  void Add(CommandSpec spec);
  const CommandSpec* Find(std::string_view name) const;  // case-insensitive
  // The spec a command line runs: a container's subcommand when one is named; nullptr when
  // unknown. No arity or flag checks (the dispatcher does those).
  const CommandSpec* FindCommand(std::span<const std::string> args) const;
  template <class Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& spec : specs_) fn(spec);
  }
  std::size_t size() const { return specs_.size(); }
  // Every top-level spec, in registration order; addresses stable once built.
  const std::vector<CommandSpec>& specs() const { return specs_; }

 private:
  // FNV-1a: command names are short, and Find() folds case and hashes in the same loop.
  struct NameHash {
    using is_transparent = void;
    static constexpr std::size_t kSeed = 14695981039346656037ULL;
    static constexpr std::size_t Step(std::size_t h, char c) {
      return (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    std::size_t operator()(std::string_view s) const {
      std::size_t h = kSeed;
      for (char c : s) h = Step(h, c);
      return h;
    }
  };
  struct NameEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  std::vector<CommandSpec> specs_;  // stable after construction
  std::uint16_t next_stat_id_ = 0;
  tsl::robin_map<std::string, std::size_t, NameHash, NameEq> index_;
};

}  // namespace latch
