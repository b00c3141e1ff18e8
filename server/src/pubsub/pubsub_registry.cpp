#include "pubsub/pubsub_registry.h"

#include <algorithm>
#include <mutex>

#include "glob_match.h"

namespace latch::pubsub {

bool PubSubRegistry::Add(Index& index, const std::string& name, Subscriber* s) {
  std::vector<Subscriber*>& list = index[name];
  if (std::find(list.begin(), list.end(), s) != list.end()) return false;
  list.push_back(s);
  return true;
}

bool PubSubRegistry::Remove(Index& index, const std::string& name, Subscriber* s) {
  auto it = index.find(name);
  if (it == index.end()) return false;
  std::vector<Subscriber*>& list = it->second;
  auto pos = std::find(list.begin(), list.end(), s);
  if (pos == list.end()) return false;
  list.erase(pos);
  if (list.empty()) index.erase(it);
  return true;
}

bool PubSubRegistry::AddChannel(const std::string& channel, Subscriber* s) {
  std::unique_lock lock(mu_);
  return Add(channels_, channel, s);
}

bool PubSubRegistry::RemoveChannel(const std::string& channel, Subscriber* s) {
  std::unique_lock lock(mu_);
  return Remove(channels_, channel, s);
}

bool PubSubRegistry::AddPattern(const std::string& pattern, Subscriber* s) {
  std::unique_lock lock(mu_);
  return Add(patterns_, pattern, s);
}

bool PubSubRegistry::RemovePattern(const std::string& pattern, Subscriber* s) {
  std::unique_lock lock(mu_);
  return Remove(patterns_, pattern, s);
}

std::int64_t PubSubRegistry::Publish(std::string_view channel, std::string_view message,
                                     Subscriber* self, std::string* self_out, std::uint64_t cap) {
  std::int64_t receivers = 0;
  auto deliver = [&](Subscriber* s, const std::string* pattern) {
    ++receivers;
    if (s == self && self_out != nullptr) {
      AppendMessage(s->proto(), channel, message, pattern, self_out);
    } else {
      s->Push(channel, message, pattern, cap);
    }
  };
  std::shared_lock lock(mu_);
  if (!channels_.empty()) {
    auto it = channels_.find(std::string(channel));
    if (it != channels_.end()) {
      for (Subscriber* s : it->second) deliver(s, nullptr);
    }
  }
  for (const auto& [pattern, list] : patterns_) {
    if (!GlobMatch(pattern, channel, false)) continue;
    for (Subscriber* s : list) deliver(s, &pattern);
  }
  return receivers;
}

std::vector<std::string> PubSubRegistry::Channels(std::optional<std::string_view> pattern) const {
  std::vector<std::string> out;
  std::shared_lock lock(mu_);
  for (const auto& [name, list] : channels_) {
    if (!pattern || GlobMatch(*pattern, name, false)) out.push_back(name);
  }
  return out;
}

std::size_t PubSubRegistry::NumSub(std::string_view channel) const {
  std::shared_lock lock(mu_);
  auto it = channels_.find(std::string(channel));
  return it == channels_.end() ? 0 : it->second.size();
}

std::size_t PubSubRegistry::NumPatterns() const {
  std::shared_lock lock(mu_);
  return patterns_.size();
}

std::size_t PubSubRegistry::NumChannels() const {
  std::shared_lock lock(mu_);
  return channels_.size();
}

}  // namespace latch::pubsub
