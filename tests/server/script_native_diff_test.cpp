// Differential test of the native path: every recognised library script is run through
// the native code and through Lua (same server code, native path switched off) over many
// key states and argument shapes; replies and the resulting keys (value, PTTL) must be
// identical. In-process: two ServerStates on two identical manual clocks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "scripting/native_scripts.h"
#include "scripting/script_engine.h"
#include "scripting/sha1.h"
#include "server_state.h"
#include "state_wiring.h"
#include "support/sanitizer.h"

namespace latch {
namespace {

using Args = std::vector<std::string>;

class Instance {
 public:
  explicit Instance(bool native) {
    clock_ = std::make_shared<ManualClock>();
    Options o;
    state_ = std::make_unique<ServerState>(o, clock_, 4, 1);
    WireUpperParts(*state_, table_);
    session_.info = std::make_shared<ClientInfo>();
    scripting::EngineFor(*state_).set_native_enabled(native);
  }
  std::string Run(const Args& args, int proto = 2) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    protocol::ReplyWriter writer(&out, proto);
    session_.proto = proto;
    CommandContext ctx{views, writer, session_, *state_, clock_->Now(), nullptr};
    table_.Dispatch(ctx);
    return out;
  }
  void Advance(std::int64_t ms) { clock_->advance(ms); }
  std::uint64_t native_runs() { return scripting::EngineFor(*state_).native_runs(); }

 private:
  CommandTable table_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<ServerState> state_;
  Session session_;
};

struct KeyState {
  std::string name;
  std::vector<Args> commands;
  std::int64_t advance_ms = 0;
};

std::vector<KeyState> KeyStates() {
  return {
      {"missing", {}},
      {"ours with ttl", {{"set", "k", "me", "px", "10000"}, {"set", "k2", "me", "px", "9000"}}},
      {"ours without ttl", {{"set", "k", "me"}, {"set", "k2", "me"}}},
      {"other's", {{"set", "k", "other", "px", "10000"}, {"set", "k2", "other"}}},
      {"mixed", {{"set", "k", "me", "px", "10000"}, {"set", "k2", "other", "px", "10000"}}},
      {"expired", {{"set", "k", "me", "px", "100"}, {"set", "k2", "me", "px", "100"}}, 100},
      {"nearly expired", {{"set", "k", "me", "px", "1400"}}, 1399},
  };
}

// Argument shapes: keys then ARGV.
std::vector<std::pair<Args, Args>> Shapes() {
  return {
      {{"k"}, {"me", "5000", "0"}},
      {{"k"}, {"me", "5000", "1"}},
      {{"k"}, {"me", "5000"}},
      {{"k"}, {"other", "5000", "0"}},
      {{"k"}, {"me"}},
      {{"k"}, {}},
      {{}, {"me", "5000", "0"}},
      {{"k", "k2"}, {"me", "5000", "0"}},
      {{"k", "k"}, {"me", "5000"}},
      {{"k"}, {"me", "abc", "0"}},
      {{"k"}, {"me", "1.5", "0"}},
      {{"k"}, {"me", "0", "0"}},
      {{"k"}, {"me", "-20000", "0"}},
      {{"k"}, {"me", "-5", "1"}},
      {{"k"}, {"me", "99999999999999999999", "0"}},
      {{"k"}, {"me", "9223372036854775807", "1"}},
      {{"k"}, {"me", " 5000", "0"}},
      {{"k"}, {"me", "2", "0"}},
  };
}

Args EvalArgs(const std::string& body, const Args& keys, const Args& argv, bool by_sha) {
  Args a{by_sha ? "evalsha" : "eval", by_sha ? scripting::Sha1Hex(body) : body,
         std::to_string(keys.size())};
  a.insert(a.end(), keys.begin(), keys.end());
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

TEST(ScriptNativeDiff, NativeAndLuaAgree) {
  int cases = 0;
  std::uint64_t native_total = 0;
  for (const auto& known : scripting::KnownScripts()) {
    std::string body(known.body);
    int state_index = 0;
    for (const KeyState& state : KeyStates()) {
      ++state_index;
      int shape_index = 0;
      for (const auto& [keys, argv] : Shapes()) {
        ++shape_index;
        for (bool by_sha : {false, true}) {
          // Under a sanitizer (it looks for memory errors and races; the Debug run compares
          // every case) half the cases: every script, key state and shape still runs, by
          // EVAL or EVALSHA alternately, so each state and each shape meets both.
          if (test::kUnderSanitizer && by_sha != ((state_index + shape_index) % 2 == 0)) {
            continue;
          }
          Instance native(true), lua(false);
          for (Instance* in : {&native, &lua}) {
            for (const Args& c : state.commands) in->Run(c);
            in->Advance(state.advance_ms);
            if (by_sha) in->Run({"script", "load", body});
          }
          Args call = EvalArgs(body, keys, argv, by_sha);
          std::string context = std::string(known.library) + " / " + state.name + " / keys " +
                                std::to_string(keys.size()) + " / argv " +
                                (argv.empty() ? "" : argv[0]) + " " +
                                (argv.size() > 1 ? argv[1] : "") + " " +
                                (argv.size() > 2 ? argv[2] : "");
          EXPECT_EQ(native.Run(call), lua.Run(call)) << context;
          for (const char* key : {"k", "k2"}) {
            EXPECT_EQ(native.Run({"get", key}), lua.Run({"get", key})) << context << " " << key;
            EXPECT_EQ(native.Run({"pttl", key}), lua.Run({"pttl", key})) << context << " " << key;
          }
          ++cases;
          EXPECT_EQ(lua.native_runs(), 0u);
          native_total += native.native_runs();
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
  // Most shapes fit the fast path; the rest fell back to Lua, as designed.
  EXPECT_GT(native_total, static_cast<std::uint64_t>(cases) / 2);
}

// Recognition: exact texts by SHA1, re-indented copies by canonical text, nothing else.
TEST(ScriptNativeDiff, Recognition) {
  using scripting::NativeKind;
  using scripting::RecogniseScript;
  for (const auto& known : scripting::KnownScripts()) {
    EXPECT_EQ(RecogniseScript(known.body, scripting::Sha1Hex(known.body)), known.kind)
        << known.library;
  }
  std::string docs =
      "if redis.call(\"get\",KEYS[1]) == ARGV[1]\n\tthen   return redis.call(\"del\",KEYS[1])"
      "\r\n else return 0 end\n";
  EXPECT_EQ(RecogniseScript(docs, scripting::Sha1Hex(docs)), NativeKind::kCompareAndDelete);
  std::string changed =
      "if redis.call(\"get\",KEYS[1]) == ARGV[2] then return redis.call(\"del\",KEYS[1]) "
      "else return 0 end";
  EXPECT_EQ(RecogniseScript(changed, scripting::Sha1Hex(changed)), NativeKind::kNone);
  // A comment that swallows code once line breaks are gone is not the same script.
  std::string upstash(scripting::KnownScripts()[11].body);
  ASSERT_EQ(scripting::KnownScripts()[11].kind, NativeKind::kUpstashExtend);
  std::string joined = upstash;
  for (char& c : joined) {
    if (c == '\n') c = ' ';
  }
  EXPECT_EQ(RecogniseScript(joined, scripting::Sha1Hex(joined)), NativeKind::kNone);
}

}  // namespace
}  // namespace latch
