#include "robust/fuzz_inputs.h"

#include <array>
#include <string_view>
#include <vector>

#include "support/raw_connection.h"

namespace latch::test {
namespace {

const std::vector<std::vector<std::string>>& Corpus() {
  static const std::vector<std::vector<std::string>> corpus = {
      {"SET", "fz:k", "value", "NX", "PX", "5000"},
      {"GET", "fz:k"},
      {"DEL", "fz:k", "fz:j"},
      {"LOCK.ACQUIRE", "fz:lock", "owner", "1000"},
      {"LOCK.ACQUIRE", "fz:lock", "owner", "1000", "WAIT", "50"},
      {"LOCK.RELEASE", "fz:lock", "owner"},
      {"LOCK.EXTEND", "fz:lock", "owner", "2000"},
      {"EVAL", "return redis.call('GET', KEYS[1])", "1", "fz:k"},
      {"MULTI"},
      {"EXEC"},
      {"WATCH", "fz:k"},
      {"CLIENT", "LIST"},
      {"CLIENT", "SETNAME", "fuzz"},
      {"HELLO", "3"},
      {"INFO", "clients"},
      {"CONFIG", "GET", "maxclients"},
      {"PEXPIRE", "fz:k", "100"},
      {"SCAN", "0", "COUNT", "10"},
      {"PING", "hello"},
  };
  return corpus;
}

std::string RandomBytes(std::mt19937_64& rng, std::size_t n) {
  static constexpr std::string_view kAlphabet = "*$\r\n0123456789-+: \"'\\x\t";
  std::string out(n, '\0');
  for (char& c : out) {
    c = (rng() % 2 == 0) ? kAlphabet[rng() % kAlphabet.size()] : static_cast<char>(rng());
  }
  return out;
}

std::string InlineForm(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) line += (line.empty() ? "" : " ") + ("\"" + a + "\"");
  return line + "\r\n";
}

void Mutate(std::mt19937_64& rng, std::string& s) {
  if (s.empty()) return;
  const std::size_t at = rng() % s.size();
  switch (rng() % 6) {
    case 0:
      s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
      break;
    case 1:
      s.insert(at, 1, static_cast<char>(rng()));
      break;
    case 2:
      s.erase(at, 1 + rng() % 8);
      break;
    case 3:
      s.insert(at, s.substr(at, 1 + rng() % 16));
      break;
    case 4: {  // a header's number replaced
      static constexpr std::array<std::string_view, 6> kNumbers = {
          "-1", "0", "2147483648", "99999999999999999999", "536870912", "1x"};
      const std::size_t mark = s.find_first_of("*$", at);
      if (mark == std::string::npos) break;
      const std::size_t end = s.find('\r', mark);
      if (end == std::string::npos) break;
      s.replace(mark + 1, end - mark - 1, kNumbers[rng() % kNumbers.size()]);
      break;
    }
    default:
      s.resize(at);
      break;
  }
}

}  // namespace

std::string NextFuzzInput(std::mt19937_64& rng) {
  if (rng() % 5 == 0) return RandomBytes(rng, 1 + rng() % 256);
  const auto& corpus = Corpus();
  std::string input;
  const std::size_t requests = 1 + rng() % 4;
  for (std::size_t i = 0; i < requests; ++i) {
    const auto& args = corpus[rng() % corpus.size()];
    input += rng() % 4 == 0 ? InlineForm(args) : RawConnection::Encode(args);
  }
  const std::size_t mutations = rng() % 4;
  for (std::size_t i = 0; i < mutations; ++i) Mutate(rng, input);
  return input;
}

}  // namespace latch::test
