#include "latch/command.h"

#include <cctype>
#include <cstdio>

#include "latch/protocol/reply_reader.h"
#include "latch/protocol/request_encoder.h"

namespace latch {

Command& Command::Add(std::string_view arg) {
  if (argc_ == 0) first_.assign(arg);
  protocol::AppendBulkArgument(&body_, arg);
  ++argc_;
  return *this;
}

Command& Command::Add(double value) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return Add(std::string_view(buf, static_cast<std::size_t>(n)));
}

std::string Command::name() const {
  std::string s = first_;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void Command::AppendTo(std::string* out) const {
  protocol::AppendMultibulkHeader(out, argc_);
  out->append(body_);
}

std::string Command::Encoded() const {
  std::string out;
  AppendTo(&out);
  return out;
}

}  // namespace latch
