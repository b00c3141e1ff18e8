#include "journal/loader.h"

#include <spdlog/logger.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <span>
#include <vector>

#include "journal/container_records.h"
#include "journal/record_codec.h"
#include "store/keyspace.h"
#include "store/lock_table.h"
#include "store/shard_guard.h"

namespace latch::journal {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool ParseUnsigned(std::string_view s, std::uint64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// A fencing token's digits; a number beyond 64 bits reads as UINT64_MAX, which Raise refuses.
bool ParseToken(std::string_view s, std::uint64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size()) {
    *v = UINT64_MAX;
    return true;
  }
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// Applies one record; false when the record is not one the journal writes.
class Applier {
 public:
  Applier(const Databases& dbs, store::FencingTokens& tokens, const TimeSnapshot& now,
          LoadResult& result)
      : dbs_(dbs), ks_(&dbs.ensure(0)), tokens_(tokens), now_(now), result_(result) {}

  // Every file starts in database 0 (the journal writes a SELECT before the first record of
  // any other database in each file).
  void StartFile(const std::string& name) {
    file_ = name;
    selected_ = 0;
    ks_ = &dbs_.ensure(0);
  }

  // A MULTI ... EXEC group (a hash or sorted set, container_records.h) applies at its EXEC;
  // one cut off by the end of a file is dropped (DiscardOpen), as Redis reverts it.
  bool Apply(std::span<const std::string_view> a) {
    if (a.size() == 1 && EqualsNoCase(a[0], "MULTI")) {
      in_multi_ = true;
      pending_.clear();
      return true;
    }
    if (a.size() == 1 && EqualsNoCase(a[0], "EXEC")) {
      if (!in_multi_) return false;
      in_multi_ = false;
      for (const auto& record : pending_) {
        if (!ApplyOne(record)) return false;
      }
      pending_.clear();
      return true;
    }
    if (in_multi_) {
      pending_.emplace_back(a.begin(), a.end());
      return true;
    }
    return ApplyOne(a);
  }

  // True when an unfinished MULTI group was dropped.
  bool DiscardOpen() {
    const bool open = in_multi_;
    in_multi_ = false;
    pending_.clear();
    return open;
  }

 private:
  bool ApplyOne(std::span<const std::string_view> a) {
    const std::string_view cmd = a[0];
    if (EqualsNoCase(cmd, "SET") && (a.size() == 3 || a.size() == 5)) {
      std::int64_t deadline = 0;
      if (a.size() == 5 && !Deadline(a[3], a[4], &deadline)) return false;
      Put(a[1], a[2], 0, deadline);
    } else if (EqualsNoCase(cmd, "LATCH.LOCK") && (a.size() == 4 || a.size() == 6)) {
      std::uint64_t token = 0;
      std::int64_t deadline = 0;
      if (!ParseToken(a[3], &token) || token == 0) return false;
      if (a.size() == 6 && !Deadline(a[4], a[5], &deadline)) return false;
      Raise(token, a[3]);
      Put(a[1], a[2], token, deadline);
    } else if (EqualsNoCase(cmd, "DEL") && a.size() >= 2) {
      for (std::string_view key : a.subspan(1)) Remove(key);
    } else if (EqualsNoCase(cmd, "LATCH.FENCE") && a.size() == 2) {
      std::uint64_t token = 0;
      if (!ParseToken(a[1], &token)) return false;
      Raise(token, a[1]);
    } else if (EqualsNoCase(cmd, "LATCH.FLUSHSHARD") && a.size() == 3) {
      std::uint64_t index = 0, count = 0;
      if (!ParseUnsigned(a[1], &index) || !ParseUnsigned(a[2], &count) || index >= count ||
          (count & (count - 1)) != 0) {
        return false;
      }
      FlushShard(index, count);
    } else if (EqualsNoCase(cmd, "FLUSHALL") || EqualsNoCase(cmd, "FLUSHDB")) {
      for (int i = 0; i < ks_->shard_count(); ++i) {
        store::ShardGuard lock(ks_->shard(i));
        ks_->shard(i).Clear();
      }
    } else if (ApplyContainerRecord(*ks_, a, now_)) {
      return true;
    } else if ((EqualsNoCase(cmd, "SELECT") && a.size() == 2) ||
               (EqualsNoCase(cmd, "SWAPDB") && a.size() == 3)) {
      return ApplyDbRecord(a);
    } else {
      return false;
    }
    return true;
  }

  bool Deadline(std::string_view opt, std::string_view value, std::int64_t* wall_ms) {
    std::uint64_t v = 0;
    if (!EqualsNoCase(opt, "PXAT") || !ParseUnsigned(value, &v) || v == 0) return false;
    *wall_ms = static_cast<std::int64_t>(v);
    return true;
  }

  // The keys that were in shard `index` of a keyspace of `count` shards (the top bits of the
  // hash pick the shard, so this holds whatever the shard count is now).
  void FlushShard(std::uint64_t index, std::uint64_t count) {
    const int bits = std::countr_zero(count);
    auto in_shard = [&](std::string_view key) {
      return bits == 0 || (store::HashKey(key) >> (64 - bits)) == index;
    };
    if (static_cast<std::uint64_t>(ks_->shard_count()) == count) {
      store::ShardGuard lock(ks_->shard(static_cast<int>(index)));
      ks_->shard(static_cast<int>(index)).Clear();
      return;
    }
    for (int i = 0; i < ks_->shard_count(); ++i) {
      store::Shard& shard = ks_->shard(i);
      store::ShardGuard lock(shard);
      std::vector<std::string> doomed;
      shard.ForEach([&](const store::Object* o) {
        if (in_shard(o->key())) doomed.emplace_back(o->key());
      });
      for (const std::string& key : doomed) {
        const std::uint64_t hash = store::HashKey(key);
        if (store::Object* o = shard.Find(key, hash, now_.mono_ms)) shard.Erase(o, hash);
      }
    }
  }

  // A token no latchd can have granted (fencing_tokens.h: the next ones would leave the signed
  // 64-bit range or wrap) means a damaged journal, whatever aof-load-truncated says: that
  // only forgives a torn last record.
  void Raise(std::uint64_t token, std::string_view text) {
    if (!store::FencingTokens::Valid(token)) {
      throw LoadError("Bad fencing token " + std::string(text) + " in the append only file " +
                      file_ + " (at most " + std::to_string(store::FencingTokens::kMaxValidToken) +
                      "): the file is damaged; restore it from a backup");
    }
    tokens_.AtLeast(token);
    if (token > result_.max_token) result_.max_token = token;
  }

  void Remove(std::string_view key) {
    const std::uint64_t hash = store::HashKey(key);
    store::Shard& shard = ks_->ShardFor(hash);
    store::ShardGuard lock(shard);
    if (store::Object* o = shard.Find(key, hash, now_.mono_ms)) shard.Erase(o, hash);
  }

  // The key's state as of this record: replaces whatever was there. A deadline that has
  // passed while the server was down leaves the key absent.
  void Put(std::string_view key, std::string_view value, std::uint64_t token,
           std::int64_t deadline_wall_ms) {
    const std::uint64_t hash = store::HashKey(key);
    store::Shard& shard = ks_->ShardFor(hash);
    store::ShardGuard lock(shard);
    store::Object* o = shard.Find(key, hash, now_.mono_ms);
    if (o != nullptr && (token != 0 || o->token() != 0)) {
      shard.Erase(o, hash);  // a token is fixed at creation: build the key anew
      o = nullptr;
    }
    if (deadline_wall_ms != 0 && deadline_wall_ms <= now_.wall_ms) {
      if (o != nullptr) shard.Erase(o, hash);
      return;
    }
    const store::Expiry expiry = deadline_wall_ms != 0
                                     ? store::Expiry::At(now_.WallToMono(deadline_wall_ms))
                                     : store::Expiry::Clear();
    shard.Put(o, key, hash, value, expiry, token);
  }

  // SELECT n / SWAPDB a b. An index out of range cannot be written by this server: the file
  // was made for one with more databases.
  bool ApplyDbRecord(std::span<const std::string_view> a) {
    std::uint64_t x = 0, y = 0;
    if (!ParseUnsigned(a[1], &x) || (a.size() == 3 && !ParseUnsigned(a[2], &y))) return false;
    const auto count = static_cast<std::uint64_t>(dbs_.set.count());
    if (x >= count || y >= count) {
      throw LoadError("The append only file selects database " + std::to_string(std::max(x, y)) +
                      " but this server has databases " + std::to_string(count));
    }
    if (a.size() == 2) {
      selected_ = static_cast<int>(x);
      ks_ = &dbs_.ensure(selected_);
      return true;
    }
    store::Keyspace* first = &dbs_.ensure(static_cast<int>(x));
    store::Keyspace* second = &dbs_.ensure(static_cast<int>(y));
    if (first->base() > second->base()) std::swap(first, second);
    std::vector<store::Shard*> held;  // the workers' active expiry runs meanwhile
    for (store::Keyspace* ks : {first, second}) {
      for (int i = 0; i < ks->shard_count(); ++i) {
        // A cluster follower applies an entry with every shard held already (ApplyFromLog).
        if (store::ThisThreadHolds(ks->shard(i))) continue;
        store::LockShard(ks->shard(i), nullptr);
        held.push_back(&ks->shard(i));
      }
    }
    dbs_.set.Swap(static_cast<int>(x), static_cast<int>(y));
    for (auto it = held.rbegin(); it != held.rend(); ++it) store::UnlockShard(**it);
    ks_ = &dbs_.ensure(selected_);  // the number stays selected, as for a client
    return true;
  }

  const Databases& dbs_;
  std::string file_;  // the file being loaded, for errors
  int selected_ = 0;
  store::Keyspace* ks_;
  store::FencingTokens& tokens_;
  const TimeSnapshot& now_;
  LoadResult& result_;
  bool in_multi_ = false;
  std::vector<std::vector<std::string_view>> pending_;  // views into the file being loaded
};

// Loads one file. `last`: the only file whose torn tail may be cut.
void LoadFile(const AofPaths& paths, const AofFile& file, bool last, bool load_truncated,
              Applier& applier, LoadResult& result, spdlog::logger& log) {
  const auto started = std::chrono::steady_clock::now();
  const std::string path = paths.Path(file.name);
  std::string data;
  try {
    data = ReadWholeFile(path);
  } catch (const std::exception& e) {
    throw LoadError(e.what());
  }
  RecordReader reader(data);
  std::vector<std::string_view> args;
  for (;;) {
    const RecordReader::Result r = reader.Next(&args);
    if (r == RecordReader::Result::kEnd) break;
    if (r == RecordReader::Result::kRecord) {
      if (!applier.Apply(args)) {
        throw LoadError("Unknown command '" + std::string(args[0]) +
                        "' reading the append only file " + file.name);
      }
      ++result.records;
      continue;
    }
    if (r == RecordReader::Result::kBadFormat) {
      throw LoadError("Bad file format reading the append only file " + file.name +
                      ": make a backup of your AOF file, then use ./redis-check-aof --fix "
                      "<filename.manifest>");
    }
    // Torn tail.
    if (last && load_truncated) {
      log.warn("!!! Warning: short read while loading the AOF file {}!!!", file.name);
      log.warn("!!! Truncating the AOF {} at offset {} !!!", file.name, reader.valid_up_to());
      if (::truncate(path.c_str(), static_cast<off_t>(reader.valid_up_to())) != 0) {
        throw LoadError("Error truncating the AOF file " + file.name + ": " + std::strerror(errno));
      }
      log.warn("AOF {} loaded anyway because aof-load-truncated is enabled", file.name);
      data.resize(reader.valid_up_to());
      break;
    }
    throw LoadError("Unexpected end of file reading the append only file " + file.name +
                    ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof "
                    "--fix <filename.manifest>. 2) Alternatively you can set the "
                    "'aof-load-truncated' configuration option to yes and restart the server.");
  }
  if (applier.DiscardOpen()) {
    log.warn("Revert incomplete MULTI/EXEC transaction in AOF file {}", file.name);
  }
  result.total_size += data.size();
  if (file.type == 'b') result.base_size = data.size();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  log.info("DB loaded from {} file {}: {:.3f} seconds", file.type == 'b' ? "base" : "incr",
           file.name, took.count());
}

}  // namespace

bool ApplyRecords(std::string_view records, const Databases& dbs, store::FencingTokens& tokens,
                  const TimeSnapshot& now, std::string* error) {
  LoadResult result;
  Applier applier(dbs, tokens, now, result);
  applier.StartFile("(raft entry)");
  RecordReader reader(records);
  std::vector<std::string_view> args;
  try {
    for (;;) {
      const RecordReader::Result r = reader.Next(&args);
      if (r == RecordReader::Result::kEnd) break;
      if (r != RecordReader::Result::kRecord) {
        *error = "bad record format";
        return false;
      }
      if (!applier.Apply(args)) {
        *error = "unknown record '" + std::string(args[0]) + "'";
        return false;
      }
    }
  } catch (const LoadError& e) {
    *error = e.what();
    return false;
  }
  if (applier.DiscardOpen()) {
    *error = "unfinished MULTI group";
    return false;
  }
  return true;
}

LoadResult LoadJournal(const AofPaths& paths, const Manifest& manifest, const Databases& dbs,
                       store::FencingTokens& tokens, const TimeSnapshot& now, bool load_truncated,
                       spdlog::logger& log) {
  LoadResult result;
  Applier applier(dbs, tokens, now, result);
  std::vector<AofFile> files;
  if (manifest.base) files.push_back(*manifest.base);
  files.insert(files.end(), manifest.incrs.begin(), manifest.incrs.end());
  for (std::size_t i = 0; i < files.size(); ++i) {
    applier.StartFile(files[i].name);
    LoadFile(paths, files[i], i + 1 == files.size(), load_truncated, applier, result, log);
  }
  return result;
}

}  // namespace latch::journal
