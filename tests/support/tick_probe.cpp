#include "support/tick_probe.h"

#include "support/eventually.h"

namespace latch::test {

namespace {
constexpr char kProbeKey[] = "__latch_test_tick_probe__";
}  // namespace

TickProbe::TickProbe(int port) : conn_(port) {
  // A database of its own: the test's DBSIZE and KEYS never see the probe.
  ok_ = conn_.Command("SELECT", "15") == "+OK\r\n" &&
        conn_.Command("SET", kProbeKey, "tick") == "+OK\r\n";
}

bool TickProbe::SawSecondsPass(int seconds, std::chrono::milliseconds limit) {
  if (!ok_) return false;
  return Eventually(
      [&] {
        last_reply_ = conn_.Command("OBJECT", "IDLETIME", kProbeKey);
        return last_reply_.size() > 1 && last_reply_[0] == ':' &&
               std::stoll(last_reply_.substr(1)) >= seconds;
      },
      limit);
}

}  // namespace latch::test
