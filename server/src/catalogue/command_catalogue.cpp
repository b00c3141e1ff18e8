#include "catalogue/command_catalogue.h"

#include <stdexcept>

#include "latch/protocol/case_fold.h"

namespace latch {

std::string_view CommandSpec::short_name() const {
  std::string_view n = name;
  auto bar = n.find('|');
  return bar == std::string_view::npos ? n : n.substr(bar + 1);
}

const CommandSpec* CommandSpec::FindSubcommand(std::string_view sub) const {
  for (const auto& s : subcommands) {
    if (EqualsNoCase(sub, s.short_name())) return &s;
  }
  return nullptr;
}

void CommandCatalogue::Add(CommandSpec spec) {
  spec.stat_id = next_stat_id_++;
  for (CommandSpec& sub : spec.subcommands) sub.stat_id = next_stat_id_++;
  if (next_stat_id_ > kMaxCommandIds) throw std::logic_error("too many commands");
  index_[spec.name] = specs_.size();
  specs_.push_back(std::move(spec));
}

const CommandSpec* CommandCatalogue::Find(std::string_view name) const {
  // Fold and hash in one pass, then look up with the precomputed hash.
  char buf[64];
  if (name.size() > sizeof(buf)) return nullptr;
  std::size_t h = NameHash::kSeed;
  for (std::size_t i = 0; i < name.size(); ++i) {
    buf[i] = AsciiLower(name[i]);
    h = NameHash::Step(h, buf[i]);
  }
  auto it = index_.find(std::string_view(buf, name.size()), h);
  return it == index_.end() ? nullptr : &specs_[it->second];
}

const CommandSpec* CommandCatalogue::FindCommand(std::span<const std::string> args) const {
  if (args.empty()) return nullptr;
  const CommandSpec* spec = Find(args[0]);
  if (spec != nullptr && spec->IsContainer() && args.size() >= 2) {
    spec = spec->FindSubcommand(args[1]);
  }
  return spec;
}

}  // namespace latch
