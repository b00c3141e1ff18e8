#pragma once
// The seed's request mix for latch_httpload, ported from bench/demoload/scenarios.py (vu_load):
// which request a virtual user sends next, and what it remembers of the answers (its last page
// of available seats, its own holds). The numbers and the request templates come from a file
// that bench/demo_load.py writes from the same definition vu_load uses (demoload/mix.py), so
// the two generators cannot drift apart.
//
// Scenario file: one `name value` per line, `#` comments:
//   users 200 / event 7 / seats 100000 / page_limit 100 / read_share 0.8 /
//   event_read_share 0.5 / confirm_share 0.5 / keep_hold_share 0.5 / tag run1
//   request <kind> <METHOD> <path template>      (kinds: read_event read_seats reserve
//   body <kind> <body template>                   confirm cancel)
//   header <kind> <Name: value template>
// Placeholders: {event} {after} {limit} {seat} {id} {user} {n} {tag}.
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace latch::bench {

enum class Kind { kReadEvent, kReadSeats, kReserve, kConfirm, kCancel };
inline constexpr int kKinds = 5;
const char* KindName(Kind k);

struct ScenarioSpec {
  int users = 200;
  std::int64_t event = 0;
  std::int64_t seats = 0;
  std::int64_t page_limit = 100;
  double read_share = 0.8;        // reads among all requests
  double event_read_share = 0.5;  // GET event among reads (the rest: a page of seats)
  double confirm_share = 0.5;     // confirm (else cancel) of a user's own hold
  double keep_hold_share = 0.5;   // holds kept to confirm or cancel later
  std::string tag = "run";        // makes Idempotency-Keys unique per run
  struct Templates {
    std::string method, path, body, header;
  };
  std::array<Templates, kKinds> requests;
};

// Reads a scenario file. On failure returns false with a message in *error.
bool LoadScenario(const std::string& path, ScenarioSpec* out, std::string* error);

struct HttpRequest {
  Kind kind = Kind::kReadEvent;
  int user = 0;
  std::string bytes;  // the whole HTTP/1.1 request
};

class SeedScenario {
 public:
  SeedScenario(ScenarioSpec spec, std::uint64_t seed);

  // The next request of virtual user `user` (0 <= user < users).
  HttpRequest Next(int user);
  // What the user learns from an answer: a page of seats to book from, a hold to settle.
  void OnResponse(const HttpRequest& req, int status, std::string_view body);

  const ScenarioSpec& spec() const { return spec_; }

 private:
  struct User {
    std::mt19937_64 rng;
    std::vector<std::int64_t> known;    // available seats from the user's last page
    std::vector<std::int64_t> pending;  // the user's held reservations
    std::int64_t n = 0;                 // requests sent so far
  };
  double Uniform(User& u) { return std::uniform_real_distribution<double>(0, 1)(u.rng); }
  std::int64_t Below(User& u, std::int64_t n) {  // uniform in [0, n)
    return std::uniform_int_distribution<std::int64_t>(0, n - 1)(u.rng);
  }

  ScenarioSpec spec_;
  std::vector<User> users_;
};

}  // namespace latch::bench
