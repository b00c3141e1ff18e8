// latch-cli: take, release, extend and inspect locks from shell scripts, against latchd or
// Redis alike.
//
//   read owner fencing < <(latch-cli lock deploy 60000 --wait 10000) || exit 1
//   ... critical section ...
//   latch-cli unlock deploy "$owner"
//
// Exit status: 0 done, 1 refused (held by another owner, not owner, lost), 2 usage or
// connection error.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "latch/client.h"
#include "latch/lock.h"

namespace {

constexpr int kOk = 0, kRefused = 1, kError = 2;

int Usage() {
  std::cerr << "usage: latch-cli [-u URL] [--timeout MS] COMMAND ...\n"
               "  lock KEY TTL_MS [--wait MS] [--owner TOKEN]   prints: OWNER FENCING|-\n"
               "  unlock KEY OWNER                              prints: ok|not-owner|lost\n"
               "  extend KEY OWNER TTL_MS                       prints: ok|not-owner|lost\n"
               "  info [KEY]                                    server capabilities, holder\n"
               "URL defaults to $LATCH_URL, else redis://127.0.0.1:6380 (latchd's port).\n";
  return kError;
}

bool ParseMillis(const std::string& s, latch::Millis* out) {
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used != s.size() || v < 0) return false;
    *out = latch::Millis(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

int Fail(const latch::Error& e) {
  std::cerr << "latch-cli: " << e.ToString() << "\n";
  return kError;
}

int PrintStatus(const latch::Result<latch::LeaseStatus>& r) {
  if (!r.ok()) return Fail(r.error());
  std::cout << latch::LeaseStatusName(*r) << "\n";
  return *r == latch::LeaseStatus::kOk ? kOk : kRefused;
}

int Lock(latch::Lock& lock, std::vector<std::string> args) {
  latch::Millis ttl;
  if (args.size() < 2 || !ParseMillis(args[1], &ttl) || ttl.count() == 0) return Usage();
  latch::AcquireOptions options;
  for (std::size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return Usage();
    if (args[i] == "--wait") {
      if (!ParseMillis(args[i + 1], &options.wait)) return Usage();
    } else if (args[i] == "--owner") {
      options.owner = args[i + 1];
    } else {
      return Usage();
    }
  }
  auto lease = lock.acquire_sync(args[0], ttl, options);
  if (!lease.ok()) {
    if (lease.error().is(latch::Errc::kNotAcquired)) {
      std::cerr << "latch-cli: " << args[0] << " is held by another owner\n";
      return kRefused;
    }
    return Fail(lease.error());
  }
  std::cout << lease->owner << " "
            << (lease->fencing_token ? std::to_string(*lease->fencing_token) : "-") << "\n";
  return kOk;
}

int Info(latch::Client& client, const std::vector<std::string>& args) {
  auto ping = client.command_sync("PING");
  if (!ping.ok()) return Fail(ping.error());
  auto caps = client.command_sync("COMMAND", "INFO", "LOCK.ACQUIRE", "EVALSHA", "DELEX");
  auto known = [&](std::size_t i) {
    return caps.ok() && caps->type == latch::ReplyType::kArray && i < caps->elements.size() &&
           caps->elements[i].is_aggregate();
  };
  std::cout << "server: " << client.options().endpoint.ToString() << "\n"
            << "lock_commands: " << (known(0) ? "yes" : "no") << "\n"
            << "scripting: " << (known(1) ? "yes" : "no") << "\n"
            << "delex: " << (known(2) ? "yes" : "no") << "\n";
  if (!args.empty()) {
    auto holder = client.command_sync("GET", args[0]);
    auto pttl = client.command_sync("PTTL", args[0]);
    if (!holder.ok()) return Fail(holder.error());
    std::cout << "key: " << args[0] << "\n"
              << "owner: " << (holder->is_null() ? "-" : holder->ToString()) << "\n"
              << "pttl_ms: " << (pttl.ok() ? pttl->ToString() : "-") << "\n";
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* env = std::getenv("LATCH_URL");
  std::string url = env != nullptr ? env : "redis://127.0.0.1:6380";
  latch::Millis timeout(2000);
  std::size_t i = 0;
  for (; i < args.size() && args[i].rfind("-", 0) == 0; i += 2) {
    if (i + 1 >= args.size()) return Usage();
    if (args[i] == "-u" || args[i] == "--url") {
      url = args[i + 1];
    } else if (args[i] == "--timeout") {
      if (!ParseMillis(args[i + 1], &timeout)) return Usage();
    } else {
      return Usage();
    }
  }
  if (i >= args.size()) return Usage();
  std::string command = args[i];
  std::vector<std::string> rest(args.begin() + static_cast<long>(i) + 1, args.end());

  auto options = latch::ClientOptions::FromUrl(url);
  if (!options.ok()) return Fail(options.error());
  options->client_name = "latch-cli";
  options->call_timeout = timeout;
  options->connect_timeout = timeout;
  latch::Client client(*options);
  latch::Lock lock(client);

  if (command == "lock") return Lock(lock, rest);
  if (command == "unlock" && rest.size() == 2) {
    latch::Lease lease{rest[0], rest[1], std::nullopt, {}};
    return PrintStatus(lock.release_sync(lease));
  }
  if (command == "extend" && rest.size() == 3) {
    latch::Millis ttl;
    if (!ParseMillis(rest[2], &ttl) || ttl.count() == 0) return Usage();
    latch::Lease lease{rest[0], rest[1], std::nullopt, {}};
    return PrintStatus(lock.extend_sync(lease, ttl));
  }
  if (command == "info" && rest.size() <= 1) return Info(client, rest);
  return Usage();
}
