// Users back to rule text (ACL LIST, GETUSER, SAVE), worded as Redis 7.0 words them.
#include <climits>

#include "acl/user.h"
#include "catalogue/command_catalogue.h"

namespace latch::acl {
namespace {

void CatPattern(const KeyPattern& k, std::string* out) {
  if (k.perms == kKeyRead) {
    out->append("%R~");
  } else if (k.perms == kKeyWrite) {
    out->append("%W~");
  } else {
    out->push_back('~');
  }
  out->append(k.pattern);
}

void SetBits(User& u, const CommandIndex::Entry& e, bool allow) {
  auto set = [&u](std::uint32_t id, bool on) {
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    u.allowed[id / 64] = on ? (u.allowed[id / 64] | bit) : (u.allowed[id / 64] & ~bit);
  };
  set(e.id, allow);
  for (std::uint32_t s : e.subs) set(s, allow);
}

void SetCategory(User& u, const CommandIndex& idx, std::uint32_t cat, bool allow) {
  for (const auto& e : idx.entries()) {
    if (e.categories & cat) SetBits(u, e, allow);
  }
}

}  // namespace

// Redis's approximation: start from +@all (when future commands are allowed) or -@all,
// apply the category that best fits the remaining difference while one fits better than
// not, then name single commands until the bits match exactly.
std::string DescribeCommands(const User& u, const CommandIndex& idx) {
  const bool additive = !u.future_commands;
  const std::size_t words = (idx.size() + 63) / 64;
  User fake;
  fake.allowed.assign(words, additive ? 0 : ~std::uint64_t{0});
  User temp;
  temp.allowed = u.allowed;
  temp.allowed.resize(words, 0);
  std::string rules = additive ? "-@all " : "+@all ";
  const auto names = CategoryNames();
  std::vector<char> applied(names.size(), 0);
  for (;;) {
    int best = -1;
    unsigned long min_diff = INT_MAX, max_same = 0;
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (applied[j]) continue;
      unsigned long on = 0, off = 0;
      for (const auto& e : idx.entries()) {
        if (!(e.categories & (1u << j))) continue;
        (temp.Allowed(e.id) ? on : off)++;
      }
      const unsigned long diff = additive ? off : on, same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    const std::uint32_t cat = 1u << best;
    SetCategory(fake, idx, cat, additive);
    SetCategory(temp, idx, cat, !additive);
    rules.append(additive ? "+@" : "-@")
        .append(names[static_cast<std::size_t>(best)])
        .push_back(' ');
    applied[static_cast<std::size_t>(best)] = 1;
  }
  for (const auto& e : idx.entries()) {
    const bool want = u.Allowed(e.id);
    if (want == fake.Allowed(e.id)) continue;
    rules.append(want ? "+" : "-").append(e.spec->name).push_back(' ');
    SetBits(fake, e, want);
  }
  rules.pop_back();
  return rules;
}

std::string DescribeKeys(const User& u) {
  if (u.all_keys) return "~*";
  std::string out;
  for (const KeyPattern& k : u.keys) {
    if (!out.empty()) out.push_back(' ');
    CatPattern(k, &out);
  }
  return out;
}

std::string DescribeChannels(const User& u) {
  if (u.all_channels) return "&*";
  std::string out;
  for (const std::string& c : u.channels) {
    if (!out.empty()) out.push_back(' ');
    out.append("&").append(c);
  }
  return out;
}

std::string DescribeUser(const User& u, const CommandIndex& idx) {
  std::string out = u.enabled ? "on " : "off ";
  if (u.nopass) out.append("nopass ");
  if (u.sanitize == User::Sanitize::kSkip) out.append("skip-sanitize-payload ");
  if (u.sanitize == User::Sanitize::kSanitize) out.append("sanitize-payload ");
  for (const std::string& p : u.passwords) out.append("#").append(p).push_back(' ');
  if (u.all_keys) {
    out.append("~* ");
  } else {
    for (const KeyPattern& k : u.keys) {
      CatPattern(k, &out);
      out.push_back(' ');
    }
  }
  if (u.all_channels) {
    out.append("&* ");
  } else {
    out.append("resetchannels ");
    for (const std::string& c : u.channels) out.append("&").append(c).push_back(' ');
  }
  out.append(DescribeCommands(u, idx));
  return out;
}

}  // namespace latch::acl
