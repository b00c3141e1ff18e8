#include "http_scenario.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <utility>

namespace latch::bench {
namespace {

constexpr std::array<const char*, kKinds> kNames = {"read_event", "read_seats", "reserve",
                                                    "confirm", "cancel"};

int KindIndex(std::string_view name) {
  for (int i = 0; i < kKinds; ++i) {
    if (name == kNames[static_cast<std::size_t>(i)]) return i;
  }
  return -1;
}

struct Var {
  std::string_view name;
  std::string value;
};

// Replaces every {name} of `vars` in `text`; other braces stay as they are (JSON bodies).
std::string Fill(std::string_view text, const std::vector<Var>& vars) {
  std::string out;
  out.reserve(text.size() + 32);
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '{') {
      for (const Var& v : vars) {
        if (text.substr(i + 1, v.name.size()) == v.name &&
            text.substr(i + 1 + v.name.size(), 1) == "}") {
          out += v.value;
          i += v.name.size() + 2;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

// Every number of the JSON array after `"key":[` in body (the service's compact JSON).
std::vector<std::int64_t> IntArray(std::string_view body, std::string_view key) {
  std::vector<std::int64_t> out;
  const std::string pattern = "\"" + std::string(key) + "\":[";
  std::size_t pos = body.find(pattern);
  if (pos == std::string_view::npos) return out;
  pos += pattern.size();
  while (pos < body.size() && body[pos] != ']') {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(body.data() + pos, body.data() + body.size(), v);
    if (ec != std::errc()) break;
    out.push_back(v);
    pos = static_cast<std::size_t>(p - body.data());
    if (pos < body.size() && body[pos] == ',') ++pos;
  }
  return out;
}

bool SetNumber(std::string_view value, double* out) {
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), *out);
  return ec == std::errc() && p == value.data() + value.size();
}

bool SetNumber(std::string_view value, std::int64_t* out) {
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), *out);
  return ec == std::errc() && p == value.data() + value.size();
}

bool ParseLine(std::string_view name, std::string_view value, ScenarioSpec* s) {
  std::int64_t users = 0;
  if (name == "users") return SetNumber(value, &users) && (s->users = static_cast<int>(users)) > 0;
  if (name == "event") return SetNumber(value, &s->event);
  if (name == "seats") return SetNumber(value, &s->seats) && s->seats > 0;
  if (name == "page_limit") return SetNumber(value, &s->page_limit) && s->page_limit > 0;
  if (name == "read_share") return SetNumber(value, &s->read_share);
  if (name == "event_read_share") return SetNumber(value, &s->event_read_share);
  if (name == "confirm_share") return SetNumber(value, &s->confirm_share);
  if (name == "keep_hold_share") return SetNumber(value, &s->keep_hold_share);
  if (name == "tag") return !(s->tag = value).empty();
  // request|body|header <kind> <rest of the line>
  const std::size_t sp = value.find(' ');
  const int kind = KindIndex(value.substr(0, sp));
  if (kind < 0 || sp == std::string_view::npos) return false;
  auto& t = s->requests[static_cast<std::size_t>(kind)];
  const std::string_view rest = value.substr(sp + 1);
  if (name == "body") return !(t.body = rest).empty();
  if (name == "header") return !(t.header = rest).empty();
  if (name != "request") return false;
  const std::size_t sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos) return false;
  t.method = rest.substr(0, sp2);
  t.path = rest.substr(sp2 + 1);
  return true;
}

}  // namespace

const char* KindName(Kind k) { return kNames[static_cast<std::size_t>(k)]; }

bool LoadScenario(const std::string& path, ScenarioSpec* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read scenario file " + path;
    return false;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t sp = line.find(' ');
    if (sp == std::string::npos || !ParseLine(std::string_view(line).substr(0, sp),
                                              std::string_view(line).substr(sp + 1), out)) {
      *error = path + ":" + std::to_string(n) + ": bad line: " + line;
      return false;
    }
  }
  for (int k = 0; k < kKinds; ++k) {
    if (out->requests[static_cast<std::size_t>(k)].path.empty()) {
      *error = path + ": no `request " + kNames[static_cast<std::size_t>(k)] + " ...` line";
      return false;
    }
  }
  if (out->event <= 0 || out->seats <= 0) {
    *error = path + ": needs `event` and `seats`";
    return false;
  }
  return true;
}

SeedScenario::SeedScenario(ScenarioSpec spec, std::uint64_t seed) : spec_(std::move(spec)) {
  users_.resize(static_cast<std::size_t>(spec_.users));
  for (std::size_t i = 0; i < users_.size(); ++i) users_[i].rng.seed(seed * 1'000'003 + i);
}

// The decisions of vu_load, in its order: read (event or a page after a random seat), else
// settle an own hold (confirm or cancel), else book one seat of the last page (or any seat).
HttpRequest SeedScenario::Next(int user) {
  User& u = users_[static_cast<std::size_t>(user)];
  ++u.n;
  HttpRequest req;
  req.user = user;
  std::vector<Var> vars = {{"event", std::to_string(spec_.event)},
                           {"user", std::to_string(user)},
                           {"n", std::to_string(u.n)},
                           {"tag", spec_.tag},
                           {"limit", std::to_string(spec_.page_limit)}};
  if (Uniform(u) < spec_.read_share) {
    if (Uniform(u) < spec_.event_read_share) {
      req.kind = Kind::kReadEvent;
    } else {
      req.kind = Kind::kReadSeats;
      const std::int64_t span = std::max<std::int64_t>(1, spec_.seats - spec_.page_limit);
      vars.push_back({"after", std::to_string(Below(u, span))});
    }
  } else if (!u.pending.empty()) {
    vars.push_back({"id", std::to_string(u.pending.back())});
    u.pending.pop_back();
    req.kind = Uniform(u) < spec_.confirm_share ? Kind::kConfirm : Kind::kCancel;
  } else {
    std::int64_t seat = 0;
    if (!u.known.empty()) {
      const auto i = static_cast<std::size_t>(Below(u, static_cast<std::int64_t>(u.known.size())));
      seat = u.known[i];
      u.known.erase(u.known.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      seat = 1 + Below(u, spec_.seats);
    }
    vars.push_back({"seat", std::to_string(seat)});
    req.kind = Kind::kReserve;
  }
  const auto& t = spec_.requests[static_cast<std::size_t>(req.kind)];
  const std::string body = Fill(t.body, vars);
  std::string& out = req.bytes;
  out = t.method + " " + Fill(t.path, vars) +
        " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  if (!body.empty()) out += "Content-Type: application/json\r\n";
  if (!t.header.empty()) out += Fill(t.header, vars) + "\r\n";
  out += "\r\n" + body;
  return req;
}

void SeedScenario::OnResponse(const HttpRequest& req, int status, std::string_view body) {
  User& u = users_[static_cast<std::size_t>(req.user)];
  if (req.kind == Kind::kReadSeats && status == 200) {
    u.known = IntArray(body, "seats");
  } else if (req.kind == Kind::kReserve && status == 201 && Uniform(u) < spec_.keep_hold_share) {
    // {"id":7,...}: the reservation's id comes first in the service's answer.
    std::int64_t id = 0;
    const std::size_t pos = body.find("\"id\":");
    if (pos != std::string_view::npos) {
      std::from_chars(body.data() + pos + 5, body.data() + body.size(), id);
      if (id > 0) u.pending.push_back(id);
    }
  }
}

}  // namespace latch::bench
