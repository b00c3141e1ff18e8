#include "acl/command_index.h"

#include <array>

#include "catalogue/command_catalogue.h"
#include "latch/protocol/case_fold.h"

namespace latch::acl {
namespace {

constexpr std::array<std::string_view, kCategoryCount> kNames = {
    "keyspace", "read",        "write",      "set",         "sortedset", "list",  "hash", "string",
    "bitmap",   "hyperloglog", "geo",        "stream",      "pubsub",    "admin", "fast", "slow",
    "blocking", "dangerous",   "connection", "transaction", "scripting", "lock"};

// The data-type category of a COMMAND DOCS group. Groups not listed (server) add none.
std::uint32_t GroupCategory(std::string_view group) {
  static constexpr std::pair<std::string_view, std::uint32_t> kGroups[] = {
      {"generic", kKeyspace},
      {"string", kString},
      {"hash", kHash},
      {"list", kList},
      {"set", kSet},
      {"sorted-set", kSortedSet},
      {"bitmap", kBitmap},
      {"hyperloglog", kHyperLogLog},
      {"geo", kGeo},
      {"stream", kStream},
      {"pubsub", kPubSub},
      {"connection", kConnection},
      {"transactions", kTransaction},
      {"scripting", kScripting},
      {"lock", kLock}};
  for (const auto& [name, cat] : kGroups) {
    if (group == name) return cat;
  }
  return 0;
}

// Categories Redis's command table gives by hand, beyond what flags and groups say.
std::uint32_t ByHand(std::string_view name) {
  static constexpr std::pair<std::string_view, std::uint32_t> kExtra[] = {
      {"keys", kDangerous},
      {"flushall", kKeyspace | kDangerous},
      {"flushdb", kKeyspace | kDangerous},
      {"dbsize", kKeyspace},
      {"info", kDangerous},
      {"sort", kDangerous},
      {"swapdb", kKeyspace | kDangerous},
      {"randomkey", kKeyspace},
      {"role", kAdmin | kDangerous},
      {"lastsave", kAdmin | kDangerous},
      {"client|kill", kConnection},
      {"client|list", kConnection | kDangerous}};
  for (const auto& [n, cat] : kExtra) {
    if (name == n) return cat;
  }
  return 0;
}

}  // namespace

std::span<const std::string_view> CategoryNames() { return kNames; }

std::uint32_t CategoryByName(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (EqualsNoCase(name, kNames[i])) return 1u << i;
  }
  return 0;
}

std::uint32_t CategoriesOf(const CommandSpec& spec) {
  std::uint32_t c = GroupCategory(spec.group) | ByHand(spec.name);
  // Redis's implicit rules (setImplicitACLCategories): flags imply categories, and a
  // command that is not @fast is @slow. Read-only scripting commands are not @read.
  if (spec.flags & kCmdWrite) c |= kWrite;
  if ((spec.flags & kCmdReadonly) && !(c & kScripting)) c |= kRead;
  if (spec.flags & kCmdAdmin) c |= kAdmin | kDangerous;
  if (spec.flags & kCmdPubSub) c |= kPubSub;
  if (spec.flags & kCmdFast) c |= kFast;
  if (spec.flags & kCmdBlocking) c |= kBlocking;
  if (!(c & kFast)) c |= kSlow;
  return c;
}

CommandIndex::CommandIndex(const CommandCatalogue& table) {
  auto add = [this](const CommandSpec& s) {
    const auto id = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back(Entry{&s, id, CategoriesOf(s), {}});
    by_spec_[&s] = id;
    by_name_[s.name] = id;
    return id;
  };
  table.ForEach([&](const CommandSpec& spec) {
    const std::uint32_t parent = add(spec);
    for (const CommandSpec& sub : spec.subcommands) {
      const std::uint32_t id = add(sub);
      entries_[parent].subs.push_back(id);
    }
  });
}

const CommandIndex::Entry* CommandIndex::Of(const CommandSpec* spec) const {
  auto it = by_spec_.find(spec);
  return it == by_spec_.end() ? nullptr : &entries_[it->second];
}

const CommandIndex::Entry* CommandIndex::ByName(std::string_view name) const {
  std::string lower(name);
  for (char& ch : lower) ch = AsciiLower(ch);
  auto it = by_name_.find(lower);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

}  // namespace latch::acl
