#pragma once
// What the ACL code knows of the command table: every command and subcommand numbered once
// (the bit a user's permission set keeps for it) with its categories. Built from the table
// after every family registered, so commands added later get ids and categories unchanged.
#include <tsl/robin_map.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace latch {
struct CommandSpec;
class CommandCatalogue;
}  // namespace latch

namespace latch::acl {

// Redis's category names in Redis's order (ACL CAT, COMMAND INFO), then latchd's @lock.
enum Category : std::uint32_t {
  kKeyspace = 1u << 0,
  kRead = 1u << 1,
  kWrite = 1u << 2,
  kSet = 1u << 3,
  kSortedSet = 1u << 4,
  kList = 1u << 5,
  kHash = 1u << 6,
  kString = 1u << 7,
  kBitmap = 1u << 8,
  kHyperLogLog = 1u << 9,
  kGeo = 1u << 10,
  kStream = 1u << 11,
  kPubSub = 1u << 12,
  kAdmin = 1u << 13,
  kFast = 1u << 14,
  kSlow = 1u << 15,
  kBlocking = 1u << 16,
  kDangerous = 1u << 17,
  kConnection = 1u << 18,
  kTransaction = 1u << 19,
  kScripting = 1u << 20,
  kLock = 1u << 21,
};
inline constexpr std::size_t kCategoryCount = 22;
std::span<const std::string_view> CategoryNames();    // bit i is CategoryNames()[i]
std::uint32_t CategoryByName(std::string_view name);  // case-insensitive; 0 when unknown
// Derived from the spec's flags and group (Redis's implicit rules plus the group's data-type
// category) and a few names Redis marks @dangerous or @keyspace by hand.
std::uint32_t CategoriesOf(const CommandSpec& spec);

class CommandIndex {
 public:
  struct Entry {
    const CommandSpec* spec;
    std::uint32_t id;
    std::uint32_t categories;
    std::vector<std::uint32_t> subs;  // ids of a container's subcommands
  };
  explicit CommandIndex(const CommandCatalogue& table);
  const Entry* Of(const CommandSpec* spec) const;
  // "get" or "client|id", case-insensitive; nullptr when unknown.
  const Entry* ByName(std::string_view name) const;
  std::span<const Entry> entries() const { return entries_; }  // table order
  const Entry& at(std::uint32_t id) const { return entries_[id]; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
  tsl::robin_map<const CommandSpec*, std::uint32_t> by_spec_;
  tsl::robin_map<std::string, std::uint32_t> by_name_;
};

}  // namespace latch::acl
