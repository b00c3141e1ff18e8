// Differential test: every corpus file (tests/wire/corpus/*.txt, format in
// differential_corpus.h) is run against a real redis-server and against latchd (embedded
// latch::Server); the raw reply bytes must be identical line by line. The same corpus is
// also run Redis-vs-Redis, which proves that the corpus itself is deterministic: a line whose
// reply varies between two Redis runs must be marked (~ or ^) rather than show up as a latch
// bug.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "differential_corpus.h"
#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() { return fs::path(LATCH_SOURCE_DIR) / "tests" / "wire" / "corpus"; }

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CorpusDir(), ec)) {
    if (entry.path().extension() == ".txt") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// One side of the comparison: a server and the connection the corpus runs on.
struct Target {
  std::string name;
  int port = 0;
  ManualClock* clock = nullptr;  // null: the server runs on real time
  RawConnection conn;
};

// What one step produced on one target, as comparable text.
struct CorpusOutcome {
  std::vector<std::string> replies;  // raw bytes, or "<no reply: ...>"
  std::string close_state;           // "", "closed" or "still open: ..." after a close
  bool failed = false;               // a reply is missing: the stream is out of step
};

bool ExpectsClose(const CorpusStep& step, const std::vector<std::string>& replies) {
  if (step.kind == CorpusStep::Kind::kCommand && !step.args.empty()) {
    std::string name = step.args[0];
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (name == "quit") return true;
  }
  return std::any_of(replies.begin(), replies.end(),
                     [](const std::string& r) { return r.rfind("-ERR Protocol error", 0) == 0; });
}

// How long a step waits for a reply. Generous: under TSan the corpus's deepest line (cmsgpack
// unpacking 100,000 nested arrays) took over 5 s on a loaded 2-core machine; waiting longer
// changes no comparison, only when a missing reply is reported.
constexpr std::chrono::milliseconds kReplyWait{30000};

CorpusOutcome RunStep(const CorpusStep& step, Target& target) {
  CorpusOutcome out;
  int expected = step.kind == CorpusStep::Kind::kRaw ? step.replies : 1;
  std::string bytes =
      step.kind == CorpusStep::Kind::kRaw ? step.raw : RawConnection::Encode(step.args);
  if (!target.conn.Send(bytes)) {
    out.replies.push_back("<send failed: " + target.conn.error() + ">");
    out.failed = true;
    return out;
  }
  for (int i = 0; i < expected; ++i) {
    std::optional<std::string> reply = target.conn.ReadReply();
    if (!reply) {
      out.replies.push_back("<no reply: " + target.conn.error() + ">");
      out.failed = true;
      break;
    }
    out.replies.push_back(*reply);
  }
  if (!out.failed && ExpectsClose(step, out.replies)) {
    std::string trailing;
    out.close_state = target.conn.WaitClosed(&trailing) ? "closed" : "still open";
    if (!trailing.empty()) out.close_state += " after extra bytes: " + Printable(trailing);
  }
  return out;
}

std::string Describe(const CorpusOutcome& outcome) {
  std::string text;
  for (const std::string& reply : outcome.replies) text += "\n      " + Printable(reply);
  if (!outcome.close_state.empty()) text += "\n      [" + outcome.close_state + "]";
  return text;
}

std::string Comparable(const CorpusStep& step, const CorpusOutcome& outcome) {
  std::string text;
  for (const std::string& reply : outcome.replies) {
    if (step.compare == CorpusStep::Compare::kType && reply.rfind("<", 0) != 0) {
      text += reply.substr(0, 1);
    } else if (step.compare == CorpusStep::Compare::kSorted) {
      text += SortAggregates(reply);
    } else {
      text += reply;
    }
    text += '\0';
  }
  return text + outcome.close_state;
}

void Connect(Target& target) {
  ASSERT_TRUE(target.conn.Connect(target.port)) << target.name << ": " << target.conn.error();
}

// Runs every step on both targets and reports each differing step.
void RunCorpus(const std::string& file, const Corpus& corpus, Target& a, Target& b) {
  Connect(a);
  Connect(b);
  // Both servers are fresh, but FLUSHALL makes a file independent of any server reuse. Its
  // replies are compared rather than required to be +OK (NOAUTH with requirepass).
  const std::string flush_a = a.conn.Command("FLUSHALL");
  ASSERT_EQ(flush_a, b.conn.Command("FLUSHALL")) << a.name << " vs " << b.name;
  ASSERT_TRUE(flush_a == "+OK\r\n" || !corpus.server_settings.empty()) << flush_a;
  for (const CorpusStep& step : corpus.steps) {
    if (step.kind == CorpusStep::Kind::kReconnect) {
      Connect(a);
      Connect(b);
      continue;
    }
    if (step.kind == CorpusStep::Kind::kAdvance) {
      if (a.clock == nullptr || b.clock == nullptr) {
        std::this_thread::sleep_for(std::chrono::milliseconds(step.advance_ms));
      }
      for (Target* t : {&a, &b}) {
        if (t->clock != nullptr) t->clock->advance(step.advance_ms);
      }
      continue;
    }
    CorpusOutcome ra = RunStep(step, a);
    CorpusOutcome rb = RunStep(step, b);
    EXPECT_EQ(Comparable(step, ra), Comparable(step, rb))
        << file << ".txt:" << step.line << ": " << step.text << "\n    " << a.name << ":"
        << Describe(ra) << "\n    " << b.name << ":" << Describe(rb);
    // A closed or out-of-step connection is replaced on both sides so that later lines
    // are still compared meaningfully.
    if (ra.failed || rb.failed || !ra.close_state.empty() || !rb.close_state.empty()) {
      Connect(a);
      Connect(b);
    }
  }
}

Corpus LoadCorpus(const std::string& name) {
  std::ifstream in(CorpusDir() / (name + ".txt"), std::ios::binary);
  EXPECT_TRUE(in.is_open()) << "cannot read " << name;
  std::stringstream text;
  text << in.rdbuf();
  Corpus corpus;
  std::string error;
  EXPECT_TRUE(ParseCorpus(text.str(), &corpus, &error)) << name << ".txt: " << error;
  return corpus;
}

// Both servers run with the default 16 databases.
std::vector<std::string> RedisArgs(const Corpus& corpus) {
  std::vector<std::string> args;
  for (const auto& [key, value] : corpus.server_settings) {
    args.push_back("--" + key);
    args.push_back(value);
  }
  return args;
}

class DifferentialTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DifferentialTest, LatchdRepliesLikeRedis) {
  Corpus corpus = LoadCorpus(GetParam());
  ASSERT_FALSE(corpus.steps.empty());
  RedisServerProcess redis(RedisArgs(corpus));
  ASSERT_TRUE(redis.ok()) << redis.error();

  Options options = EmbeddedServer::DefaultOptions();
  for (const auto& [key, value] : corpus.server_settings) {
    ASSERT_EQ(key, "requirepass") << "the embedded server maps only requirepass";
    options.requirepass = value;
  }
  // The manual clock starts at the real time so that absolute times (EXPIREAT, EXAT) mean
  // the same on both servers; !advance moves it while Redis sleeps.
  EmbeddedServer latch(options, EmbeddedServer::NowWallMs());

  Target a{"redis-server", redis.port(), nullptr, RawConnection(kReplyWait)};
  Target b{"latchd", latch.port(), &latch.clock(), RawConnection(kReplyWait)};
  RunCorpus(GetParam(), corpus, a, b);
}

TEST_P(DifferentialTest, CorpusIsDeterministicOnRedis) {
  Corpus corpus = LoadCorpus(GetParam());
  ASSERT_FALSE(corpus.steps.empty());
  RedisServerProcess first(RedisArgs(corpus));
  ASSERT_TRUE(first.ok()) << first.error();
  RedisServerProcess second(RedisArgs(corpus));
  ASSERT_TRUE(second.ok()) << second.error();
  Target a{"redis-server#1", first.port(), nullptr, RawConnection(kReplyWait)};
  Target b{"redis-server#2", second.port(), nullptr, RawConnection(kReplyWait)};
  RunCorpus(GetParam(), corpus, a, b);
}

INSTANTIATE_TEST_SUITE_P(Corpus, DifferentialTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace latch::test
