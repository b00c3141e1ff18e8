// latchd's configuration: the config file and command line (redis-server's invocation), value
// parsing with Redis's units and reasons, the directive table behind CONFIG GET/SET, logging.
// Expected texts were taken from redis-server 7.0.15.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_directives.h"
#include "config/config_get_set.h"
#include "config/config_parser.h"
#include "config/config_values.h"
#include "config/log_setup.h"

namespace latch::config {
namespace {

namespace fs = std::filesystem;

// A file in the temp directory, unique per process and test, removed at scope exit.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("latch_config_test_" + std::to_string(::getpid()) + "_" + info->name() + ".conf");
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

Options Load(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"latchd"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return LoadOptions(static_cast<int>(argv.size()), argv.data());
}

Options FromText(const std::string& text) {
  Options o;
  ApplyConfigText(text, "the configuration file 'test.conf'", o);
  return o;
}

// Runs `fn`, expecting a ConfigError, and returns it.
template <typename Fn>
ConfigError ExpectConfigError(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return ConfigError("none");
}

// ---------------------------------------------------------------- line splitting

TEST(SplitConfigLineTest, SplitsLikeRedis) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitConfigLine("port 6380"), (V{"port", "6380"}));
  EXPECT_EQ(SplitConfigLine("  port \t 6380  "), (V{"port", "6380"}));
  EXPECT_EQ(SplitConfigLine("requirepass \"a b\""), (V{"requirepass", "a b"}));
  EXPECT_EQ(SplitConfigLine("requirepass 'a b'"), (V{"requirepass", "a b"}));
  EXPECT_EQ(SplitConfigLine("x \"\\x41\\n\\t\\\"\\\\\""), (V{"x", "A\n\t\"\\"}));
  EXPECT_EQ(SplitConfigLine("x 'it\\'s'"), (V{"x", "it's"}));
  EXPECT_EQ(SplitConfigLine("x 'a\\nb'"), (V{"x", "a\\nb"}));    // no escapes in single quotes
  EXPECT_EQ(SplitConfigLine("x ab\"c d\""), (V{"x", "abc d"}));  // a quote may open mid-word
  EXPECT_EQ(SplitConfigLine("logfile \"\""), (V{"logfile", ""}));
  EXPECT_EQ(SplitConfigLine(""), V{});
}

TEST(SplitConfigLineTest, RefusesUnbalancedQuotes) {
  EXPECT_FALSE(SplitConfigLine("requirepass \"a b"));
  EXPECT_FALSE(SplitConfigLine("requirepass 'a b"));
  EXPECT_FALSE(SplitConfigLine("requirepass \"a\"b"));  // closing quote must end the word
  EXPECT_FALSE(SplitConfigLine("requirepass 'a'b"));
}

// ---------------------------------------------------------------- values

TEST(ConfigValuesTest, StrictIntegers) {
  EXPECT_EQ(ParseStrictInteger("0"), 0);
  EXPECT_EQ(ParseStrictInteger("42"), 42);
  EXPECT_EQ(ParseStrictInteger("-42"), -42);
  EXPECT_EQ(ParseStrictInteger("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseStrictInteger("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", "-", "-0", "05", "+5", " 5", "5 ", "1.5", "0x10", "abc",
                          "9223372036854775808", "-9223372036854775809", "99999999999999999999"}) {
    EXPECT_FALSE(ParseStrictInteger(bad)) << bad;
  }
}

TEST(ConfigValuesTest, MemoryUnitsAsRedisConf) {
  EXPECT_EQ(ParseMemory("100"), 100u);
  EXPECT_EQ(ParseMemory("1b"), 1u);
  EXPECT_EQ(ParseMemory("1B"), 1u);
  EXPECT_EQ(ParseMemory("1k"), 1000u);
  EXPECT_EQ(ParseMemory("1K"), 1000u);
  EXPECT_EQ(ParseMemory("1kb"), 1024u);
  EXPECT_EQ(ParseMemory("1KB"), 1024u);
  EXPECT_EQ(ParseMemory("2m"), 2000000u);
  EXPECT_EQ(ParseMemory("2mb"), 2u * 1024 * 1024);
  EXPECT_EQ(ParseMemory("3g"), 3000000000u);
  EXPECT_EQ(ParseMemory("3Gb"), 3ULL * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseMemory("05mb"), 5u * 1024 * 1024);  // leading zeros are fine here
  EXPECT_EQ(ParseMemory(""), 0u);                    // as memtoull()
  EXPECT_EQ(ParseMemory("mb"), 0u);
  for (const char* bad : {"-1", "+5mb", " 5mb", "1 mb", "1.5mb", "0x100000", "1tb", "1kbb",
                          "99999999999999999999", "17179869184gb"}) {
    EXPECT_FALSE(ParseMemory(bad)) << bad;
  }
}

TEST(ConfigValuesTest, ReasonsAreRedisTexts) {
  EXPECT_EQ(std::get<std::string>(ParseIntegerInRange("abc", 0, 10)),
            "argument couldn't be parsed into an integer");
  EXPECT_EQ(std::get<std::string>(ParseIntegerInRange("11", 0, 10)),
            "argument must be between 0 and 10 inclusive");
  EXPECT_EQ(std::get<std::string>(ParseMemoryInRange("1x", 0, 10)),
            "argument must be a memory value");
  EXPECT_EQ(std::get<std::string>(ParseMemoryInRange("9223372036854775808", 0, INT64_MAX)),
            "argument must be a memory value");
  EXPECT_EQ(std::get<std::string>(ParseYesNo("maybe")), "argument must be 'yes' or 'no'");
  EXPECT_TRUE(std::get<bool>(ParseYesNo("YES")));
  EXPECT_FALSE(std::get<bool>(ParseYesNo("No")));
  EXPECT_EQ(std::get<std::string>(ParseEnum("x", {"a", "b", "c"})),
            "argument(s) must be one of the following: a, b, c");
  EXPECT_EQ(std::get<int>(ParseEnum("B", {"a", "b", "c"})), 1);
}

// ---------------------------------------------------------------- config text

TEST(ConfigTextTest, ParsesEveryDirective) {
  const Options o = FromText(
      "# a comment\n"
      "\n"
      "   # an indented comment\n"
      "bind 0.0.0.0\n"
      "port 7000\n"
      "io-threads 4\n"
      "shards 256\n"
      "requirepass \"correct horse\"\n"
      "maxclients 50\n"
      "timeout 300\n"
      "proto-max-bulk-len 2mb\n"
      "client-query-buffer-limit 1gb\n"
      "loglevel warning\n"
      "logfile /tmp/latchd.log\n"
      "enable-debug-command local\n"
      "hz 100\n"
      "lua-time-limit 1000\n");
  EXPECT_EQ(o.bind, "0.0.0.0");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.io_threads, 4);
  EXPECT_EQ(o.shards, 256);
  EXPECT_EQ(o.requirepass, "correct horse");
  EXPECT_EQ(o.maxclients, 50);
  EXPECT_EQ(o.timeout, 300);
  EXPECT_EQ(o.proto_max_bulk_len, 2 * 1024 * 1024);
  EXPECT_EQ(o.client_query_buffer_limit, 1024LL * 1024 * 1024);
  EXPECT_EQ(o.loglevel, "warning");
  EXPECT_EQ(o.logfile, "/tmp/latchd.log");
  EXPECT_FALSE(o.enable_debug_command);
  EXPECT_TRUE(o.enable_debug_command_local);
  EXPECT_EQ(o.hz, 100);
  EXPECT_EQ(o.lua_time_limit, 1000);
}

TEST(ConfigTextTest, NamesAndEnumsAreCaseInsensitiveAndLaterLinesWin) {
  const Options o = FromText("PORT 7000\r\nPort 7001\r\nLogLevel DEBUG\nEnable-Debug-Command YES");
  EXPECT_EQ(o.port, 7001);
  EXPECT_EQ(o.loglevel, "debug");  // stored in canonical lower case
  EXPECT_TRUE(o.enable_debug_command);
  EXPECT_FALSE(o.enable_debug_command_local);
}

TEST(ConfigTextTest, HzIsClampedAsRedis) {
  EXPECT_EQ(FromText("hz 0").hz, 1);
  EXPECT_EQ(FromText("hz 1000").hz, 500);
}

TEST(ConfigTextTest, ShardsMustBeZeroOrAPowerOfTwo) {
  EXPECT_EQ(FromText("shards 1").shards, 1);
  EXPECT_EQ(FromText("shards 4096").shards, 4096);
  EXPECT_EQ(FromText("shards 0").shards, 0);
  EXPECT_EQ(ExpectConfigError([] { FromText("shards 12"); }).reason(),
            "argument must be 0 (automatic) or a power of two");
  EXPECT_EQ(ExpectConfigError([] { FromText("shards 8192"); }).reason(),
            "argument must be between 0 and 4096 inclusive");
}

struct BadLine {
  const char* text;  // preceded by one good line and a comment, so it is line 3
  const char* reason;
};

TEST(ConfigTextTest, EveryErrorNamesFileLineTextAndReason) {
  const BadLine cases[] = {
      {"nosuch 5", "Bad directive or wrong number of arguments"},
      {"port", "wrong number of arguments"},
      {"port 1 2", "wrong number of arguments"},
      {"requirepass \"a b", "Unbalanced quotes in configuration line"},
      {"port abc", "argument couldn't be parsed into an integer"},
      {"port 70000", "argument must be between 0 and 65535 inclusive"},
      {"port -1", "argument must be between 0 and 65535 inclusive"},
      {"io-threads 129", "argument must be between 0 and 128 inclusive"},
      {"io-engine poll", "argument(s) must be one of the following: epoll, uring"},
      {"maxclients 0", "argument must be between 1 and 4294967295 inclusive"},
      {"timeout -1", "argument must be between 0 and 2147483647 inclusive"},
      {"timeout 1.5", "argument couldn't be parsed into an integer"},
      {"proto-max-bulk-len 1x", "argument must be a memory value"},
      {"proto-max-bulk-len 1kb",  // Redis's upper bound is LLONG_MAX; latchd's is 2gb - 1
       "argument must be between 1048576 and 2147483647 inclusive"},
      {"client-query-buffer-limit -1", "argument must be a memory value"},
      {"loglevel loud",
       "argument(s) must be one of the following: debug, verbose, notice, warning, nothing"},
      {"enable-debug-command maybe", "argument(s) must be one of the following: no, yes, local"},
      {"hz -1", "argument must be between 0 and 2147483647 inclusive"},
      {"lua-time-limit -5", "argument must be between 0 and 9223372036854775807 inclusive"},
      {"maxmemory lots", "argument must be a memory value"},
      {"maxmemory-policy allkeys-lru",
       "latchd never evicts keys (an evicted lock is a lost lock): only noeviction is supported"},
      {"maxmemory-policy lru",
       "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
       "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
  };
  for (const BadLine& c : cases) {
    const std::string text = std::string("port 7000\n# comment\n  ") + c.text + "  \nport 1\n";
    const ConfigError e = ExpectConfigError([&] { FromText(text); });
    EXPECT_EQ(e.source(), "the configuration file 'test.conf'") << c.text;
    EXPECT_EQ(e.line(), 3) << c.text;
    EXPECT_EQ(e.text(), c.text);
    EXPECT_EQ(e.reason(), c.reason);
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with("*** FATAL CONFIG FILE ERROR (latchd ")) << what;
    EXPECT_NE(what.find(" ***\nReading the configuration file 'test.conf', at line 3\n>>> '" +
                        std::string(c.text) + "'\n" + c.reason + "\n"),
              std::string::npos)
        << what;
  }
}

TEST(ConfigTextTest, ShippedConfigFileHoldsTheDefaults) {
  const fs::path conf = fs::path(LATCH_SOURCE_DIR) / "conf/latchd.conf";
  const Options o = Load({conf.string()});
  const Options defaults;
  for (const ConfigDirective& d : ConfigDirectives()) {
    EXPECT_EQ(d.get(o), d.get(defaults)) << d.name;
  }
  // Every directive is documented and set in the file.
  std::ifstream in(conf);
  std::stringstream text;
  text << in.rdbuf();
  for (const ConfigDirective& d : ConfigDirectives()) {
    // `user` adds a user per line: the file documents it with commented examples.
    const std::string line = (d.name == "user" ? "\n# " : "\n") + std::string(d.name) + " ";
    EXPECT_NE(text.str().find(line), std::string::npos) << d.name;
  }
}

// ---------------------------------------------------------------- command line

TEST(LoadOptionsTest, NoArgumentsGiveTheDefaults) {
  const Options o = Load({});
  EXPECT_EQ(o.bind, "127.0.0.1");
  EXPECT_EQ(o.port, 6380);
}

TEST(LoadOptionsTest, BindTakesSeveralAddressesAsRedisDoes) {
  TempFile file("bind 127.0.0.1   -::1\n");
  EXPECT_EQ(Load({file.path()}).bind, "127.0.0.1 -::1");
  EXPECT_EQ(Load({"--bind", "127.0.0.1", "-::1"}).bind, "127.0.0.1 -::1");
  EXPECT_EQ(Load({"--bind", "*", "-::*"}).bind, "* -::*") << "Redis's wildcards";
  const ConfigDirective* bind = FindConfigDirective("bind");
  Options o;
  EXPECT_EQ(bind->set(o, "127.0.0.1 nonsense"), "'nonsense' is not an IP address");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += "127.0.0.1 ";
  EXPECT_EQ(bind->set(o, seventeen), "Too many bind addresses specified.");
  EXPECT_EQ(bind->set(o, "  "), "argument must be an address, not empty");
  EXPECT_EQ(o.bind, "127.0.0.1") << "a refused value leaves the option as it was";
}

TEST(LoadOptionsTest, MaxmemoryTakesAMemorySize) {
  TempFile file("maxmemory 100mb\nmaxmemory-policy NoEviction\n");
  EXPECT_EQ(Load({file.path()}).maxmemory, 100 * 1024 * 1024);
  EXPECT_EQ(Load({file.path(), "--maxmemory", "1gb"}).maxmemory, 1024 * 1024 * 1024);
}

TEST(LoadOptionsTest, CommandLineOverridesTheFile) {
  TempFile file("port 7000\nrequirepass secret\ntimeout 5\n");
  const Options o =
      Load({file.path(), "--port", "7001", "--requirepass", "a b", "--LOGLEVEL", "verbose"});
  EXPECT_EQ(o.port, 7001);
  EXPECT_EQ(o.requirepass, "a b");  // one argv element is one value, spaces and all
  EXPECT_EQ(o.timeout, 5);
  EXPECT_EQ(o.loglevel, "verbose");
}

TEST(LoadOptionsTest, OptionsWithoutFile) {
  const Options o = Load({"--port", "0", "--bind", "127.0.0.1", "--requirepass", ""});
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(o.requirepass, "");
}

TEST(LoadOptionsTest, FileErrorsNameTheFile) {
  TempFile file("port 7000\nport 99999\n");
  const ConfigError e = ExpectConfigError([&] { Load({file.path(), "--port", "1"}); });
  EXPECT_EQ(e.source(), "the configuration file '" + file.path() + "'");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.text(), "port 99999");
}

TEST(LoadOptionsTest, CommandLineErrorsNameTheArgument) {
  TempFile file("port 7000\n");
  ConfigError e = ExpectConfigError([&] { Load({file.path(), "--timeout", "5", "--port", "x"}); });
  EXPECT_EQ(e.source(), "the command line");
  EXPECT_EQ(e.line(), 4);  // argv[4] is "--port"
  EXPECT_EQ(e.text(), "port \"x\"");
  EXPECT_EQ(e.reason(), "argument couldn't be parsed into an integer");
  EXPECT_NE(std::string(e.what()).find("Reading the command line, at argument 4\n"),
            std::string::npos);

  e = ExpectConfigError([] { Load({"--port"}); });
  EXPECT_EQ(e.reason(), "wrong number of arguments");
  e = ExpectConfigError([] { Load({"--port", "1", "2"}); });
  EXPECT_EQ(e.reason(), "wrong number of arguments");
  e = ExpectConfigError([] { Load({"--nosuch", "1"}); });
  EXPECT_EQ(e.reason(), "Bad directive or wrong number of arguments");
  EXPECT_EQ(e.text(), "nosuch \"1\"");
  // A value with no --directive before it (the file is only argv[1]).
  e = ExpectConfigError([&] { Load({file.path(), "6380"}); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.reason(), "Bad directive or wrong number of arguments");
}

TEST(LoadOptionsTest, MissingFileIsAClearError) {
  const ConfigError e = ExpectConfigError([] { Load({"/nonexistent/latchd.conf"}); });
  EXPECT_EQ(std::string(e.what()),
            "Fatal error, can't open config file '/nonexistent/latchd.conf': "
            "No such file or directory");
  EXPECT_EQ(e.line(), 0);
}

TEST(LoadOptionsTest, VersionAndHelpOnlyAsFirstArgument) {
  auto classify = [](std::vector<const char*> argv) {
    return ClassifyCommandLine(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(classify({"latchd"}), CommandLineAction::kRun);
  EXPECT_EQ(classify({"latchd", "-v"}), CommandLineAction::kVersion);
  EXPECT_EQ(classify({"latchd", "--version"}), CommandLineAction::kVersion);
  EXPECT_EQ(classify({"latchd", "-h"}), CommandLineAction::kHelp);
  EXPECT_EQ(classify({"latchd", "--help"}), CommandLineAction::kHelp);
  EXPECT_EQ(classify({"latchd", "x.conf", "--version"}), CommandLineAction::kRun);
  EXPECT_TRUE(VersionText().starts_with("latchd v="));
  EXPECT_NE(UsageText("latchd").find("Usage: latchd [/path/to/latchd.conf] [options]"),
            std::string::npos);
}

// ---------------------------------------------------------------- CONFIG GET / SET

TEST(ConfigDirectivesTest, DefaultsFormatAsRedisDoes) {
  // The values redis-server 7.0 replies to CONFIG GET for the same defaults.
  const Options o;
  auto get = [&](std::string_view name) { return FindConfigDirective(name)->get(o); };
  EXPECT_EQ(get("maxclients"), "10000");
  EXPECT_EQ(get("timeout"), "0");
  EXPECT_EQ(get("proto-max-bulk-len"), "536870912");
  EXPECT_EQ(get("client-query-buffer-limit"), "1073741824");
  EXPECT_EQ(get("loglevel"), "notice");
  EXPECT_EQ(get("enable-debug-command"), "no");
  EXPECT_EQ(get("hz"), "10");
  EXPECT_EQ(get("lua-time-limit"), "5000");
  EXPECT_EQ(get("requirepass"), "");
  EXPECT_EQ(get("bind"), "127.0.0.1");
  EXPECT_EQ(get("port"), "6380");
  EXPECT_EQ(FindConfigDirective("MaxClients"), FindConfigDirective("maxclients"));
  EXPECT_EQ(FindConfigDirective("nosuch"), nullptr);
}

TEST(ConfigDirectivesTest, BulkLengthFitsTheStoresLengthFields) {
  Options o;
  EXPECT_EQ(FindConfigDirective("proto-max-bulk-len")->set(o, "2147483647"), std::nullopt);
  EXPECT_EQ(o.proto_max_bulk_len, 2147483647LL);
  EXPECT_NE(FindConfigDirective("proto-max-bulk-len")->set(o, "2gb"), std::nullopt);
  EXPECT_EQ(o.proto_max_bulk_len, 2147483647LL) << "a refused value leaves the option as it was";
}

TEST(ConfigDirectivesTest, RestBindTakesBindsFormOrEmpty) {
  Options o;
  EXPECT_EQ(FindConfigDirective("rest-bind")->set(o, "*  -::*"), std::nullopt);
  EXPECT_EQ(o.rest_bind, "* -::*");
  EXPECT_EQ(FindConfigDirective("rest-bind")->set(o, ""), std::nullopt);
  EXPECT_EQ(o.rest_bind, "") << "empty: the addresses of bind";
  EXPECT_EQ(FindConfigDirective("rest-bind")->set(o, "not-an-ip"),
            std::optional<std::string>("'not-an-ip' is not an IP address"));
  EXPECT_EQ(o.rest_bind, "");
}

TEST(ConfigDirectivesTest, SnapshotsRefusedJournalAccepted) {
  Options o;
  EXPECT_EQ(FindConfigDirective("save")->set(o, ""), std::nullopt);
  EXPECT_NE(FindConfigDirective("save")->set(o, "900 1"), std::nullopt);
  EXPECT_EQ(FindConfigDirective("appendonly")->set(o, "NO"), std::nullopt);
  EXPECT_EQ(FindConfigDirective("appendonly")->set(o, "yes"), std::nullopt);
  EXPECT_EQ(FindConfigDirective("appendfsync")->set(o, "sometimes"),
            "argument(s) must be one of the following: everysec, always, no");
  EXPECT_EQ(FindConfigDirective("appendfilename")->set(o, "a/b"),
            "appendfilename can't be a path, just a filename");
}

TEST(ConfigDirectivesTest, EveryDirectiveRoundTrips) {
  const std::pair<const char*, const char*> values[] = {
      {"bind", "::1"},
      {"port", "7777"},
      {"metrics-port", "9121"},
      {"rest-port", "8079"},
      {"rest-bind", "127.0.0.1 -::1"},
      {"rest-token", "t0k en"},
      {"rest-user", "svc"},
      {"io-threads", "3"},
      {"shards", "64"},
      {"requirepass", "p w"},
      {"maxclients", "12"},
      {"timeout", "60"},
      {"proto-max-bulk-len", "2097152"},
      {"client-query-buffer-limit", "3145728"},
      {"client-output-buffer-limit",
       "normal 1 2 3 slave 268435456 67108864 60 pubsub 33554432 8388608 60"},
      {"loglevel", "verbose"},
      {"logfile", "/var/log/latchd.log"},
      {"enable-debug-command", "local"},
      {"enable-protected-configs", "yes"},
      {"hz", "20"},
      {"lua-time-limit", "100"},
      {"busy-reply-threshold", "100"},
      {"maxmemory", "104857600"},
      {"maxmemory-policy", "noeviction"},
      {"save", ""},
      {"protected-mode", "no"},
      {"tcp-backlog", "128"},
      {"tcp-keepalive", "60"},
      {"tls-port", "6390"},
      {"tls-cert-file", "/etc/latch/tls/server.crt"},
      {"tls-key-file", "/etc/latch/tls/server.key"},
      {"tls-key-file-pass", "secret"},
      {"tls-ca-cert-file", "/etc/latch/tls/ca.crt"},
      {"tls-ca-cert-dir", "/etc/ssl/certs"},
      {"tls-auth-clients", "optional"},
      {"tls-protocols", "TLSv1.3"},
      {"tls-ciphers", "HIGH:!aNULL"},
      {"tls-ciphersuites", "TLS_AES_256_GCM_SHA384"},
      {"tls-dh-params-file", "/etc/latch/tls/dh.pem"},
      {"tls-prefer-server-ciphers", "yes"},
      {"tls-session-caching", "no"},
      {"tls-session-cache-size", "100"},
      {"tls-session-cache-timeout", "60"},
      {"tls-handshake-timeout", "2000"},
      {"supervised", "systemd"},
      {"daemonize", "yes"},
      {"pidfile", "/run/latch/latchd.pid"},
      {"syslog-enabled", "yes"},
      {"syslog-ident", "latch-test"},
      {"syslog-facility", "local3"},
      {"appendonly", "yes"},
      {"appenddirname", "journal"},
      {"appendfilename", "latch.aof"},
      {"appendfsync", "always"},
      {"auto-aof-rewrite-percentage", "50"},
      {"auto-aof-rewrite-min-size", "1048576"},
      {"aof-load-truncated", "no"},
      {"aof-timestamp-enabled", "yes"},
      {"lock-restart-delay", "30000"},
      {"raft-id", "2"},
      {"raft-addr", "10.0.0.2:7001"},
      {"raft-peers", "1=10.0.0.1:7001:6380 2=10.0.0.2:7001:6380"},
      {"raft-dir", "/var/lib/latchd/raft"},
      {"raft-election-timeout", "600"},
      {"raft-heartbeat-interval", "50"},
      {"raft-snapshot-threshold", "64"},
      {"raft-snapshot-trailing", "16"},
      {"raft-install-snapshot-timeout", "2000"},
      {"raft-leader-probe", "no"},
      {"raft-sentinel-name", "locks"},
      {"enable-test-commands", "yes"},
      {"clock", "manual"},
      {"unixsocket", "/run/latch/latchd.sock"},
      {"unixsocketperm", "770"},
      {"slowlog-log-slower-than", "-1"},
      {"slowlog-max-len", "1000"},
      {"latency-monitor-threshold", "100"},
      {"latency-tracking", "no"},
      {"aclfile", "/etc/latch/users.acl"},
      {"databases", "32"},
      {"io-engine", "uring"},
  };
  // dir does not round-trip (CONFIG GET shows the working directory), nor user (each line
  // adds a user; CONFIG GET does not list it, as Redis).
  ASSERT_EQ(std::size(values) + 2, ConfigDirectives().size());
  for (const auto& [name, value] : values) {
    const ConfigDirective* d = FindConfigDirective(name);
    ASSERT_NE(d, nullptr) << name;
    Options o;
    EXPECT_EQ(d->set(o, value), std::nullopt) << name;
    EXPECT_EQ(d->get(o), value) << name;
    // What CONFIG GET shows can be fed back unchanged.
    Options again;
    EXPECT_EQ(d->set(again, d->get(o)), std::nullopt) << name;
    EXPECT_EQ(d->get(again), value) << name;
  }
  Options o;
  ASSERT_EQ(FindConfigDirective("enable-debug-command")->set(o, "yes"), std::nullopt);
  EXPECT_EQ(FindConfigDirective("enable-debug-command")->get(o), "yes");
  ASSERT_EQ(FindConfigDirective("proto-max-bulk-len")->set(o, "1gb"), std::nullopt);
  EXPECT_EQ(FindConfigDirective("proto-max-bulk-len")->get(o), "1073741824");
}

TEST(ConfigGetTest, ExactNamesEchoTheArgumentGlobsGiveTheName) {
  const Options o;
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  std::vector<std::string_view> args{"maxclients"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"maxclients", "10000"}}));
  args = {"PORT"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"PORT", "6380"}}));
  args = {"P*rt"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"port", "6380"}}));
  args = {"nosuch"};
  EXPECT_EQ(ConfigGet(o, args), Pairs{});
  args = {"maxclient?", "timeout", "maxclients", "hz", "hz"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"maxclients", "10000"}, {"timeout", "0"}, {"hz", "10"}}));
  // Every directive, plus the 12 encoding thresholds CONFIG GET shows (hash-, zset-, list-
  // (listpack and ziplist names), set-max-intset-entries, stream-node-max-entries).
  constexpr std::size_t kThresholds = 12;
  args = {"*"};
  EXPECT_EQ(ConfigGet(o, args).size(), ConfigDirectives().size() + kThresholds);
  // proto-max-bulk-len, client-query-buffer-limit, client-output-buffer-limit,
  // enable-debug-command, enable-protected-configs, lua-time-limit, busy-reply-threshold,
  // aof-load-truncated, aof-timestamp-enabled, lock-restart-delay, auto-aof-rewrite-percentage,
  // auto-aof-rewrite-min-size, enable-test-commands, slowlog-log-slower-than, slowlog-max-len,
  // latency-monitor-threshold, raft-election-timeout, raft-heartbeat-interval,
  // raft-sentinel-name, raft-snapshot-threshold, raft-snapshot-trailing,
  // raft-install-snapshot-timeout, raft-leader-probe, and 12 tls-* directives
  args = {"*-*-*"};
  EXPECT_EQ(ConfigGet(o, args).size(), 23u + 12u + kThresholds);
  // proto-max-bulk-len, client-query-buffer-limit, client-output-buffer-limit,
  // auto-aof-rewrite-percentage, auto-aof-rewrite-min-size, slowlog-log-slower-than,
  // raft-install-snapshot-timeout, and 7 tls-* directives
  args = {"*-*-*-*"};
  EXPECT_EQ(ConfigGet(o, args).size(), 7u + 7u + kThresholds);
}

// Redis's test suite and clients save a threshold and put it back: GET must answer what SET
// then accepts, under either name.
TEST(ConfigGetTest, EncodingThresholdsReadBackAsLatchdFollowsThem) {
  Options o;
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  std::vector<std::string_view> args{"zset-max-ziplist-entries"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"zset-max-ziplist-entries", "128"}}));
  args = {"HASH-MAX-LISTPACK-VALUE"};
  EXPECT_EQ(ConfigGet(o, args), (Pairs{{"HASH-MAX-LISTPACK-VALUE", "64"}}));
  args = {"zset-max-*"};
  EXPECT_EQ(ConfigGet(o, args).size(), 4u);
  args = {"list-max-ziplist-entries"};  // a config-file leftover Redis does not show
  EXPECT_EQ(ConfigGet(o, args), Pairs{});
  std::vector<std::string_view> set{"zset-max-ziplist-entries", "128"};
  EXPECT_EQ(ConfigSet(o, set), std::nullopt);
  set = {"zset-max-ziplist-entries", "x"};
  EXPECT_NE(ConfigSet(o, set), std::nullopt);
}

std::optional<std::string> Set(Options& o, std::vector<std::string_view> args) {
  return ConfigSet(o, args);
}

TEST(ConfigSetTest, ErrorsAreRedisTexts) {
  Options o;
  EXPECT_EQ(Set(o, {"nosuch", "1"}),
            "ERR Unknown option or number of arguments for CONFIG SET - "
            "'nosuch'");
  EXPECT_EQ(Set(o, {"port", "7000"}),
            "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable "
            "config");
  EXPECT_EQ(Set(o, {"io-threads", "2"}),
            "ERR CONFIG SET failed (possibly related to argument 'io-threads') - can't set "
            "immutable config");
  EXPECT_EQ(Set(o, {"io-engine", "uring"}),
            "ERR CONFIG SET failed (possibly related to argument 'io-engine') - can't set "
            "immutable config");
  EXPECT_EQ(Set(o, {"timeout", "10", "timeout", "20"}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate "
            "parameter");
  EXPECT_EQ(Set(o, {"Timeout", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'Timeout') - argument couldn't "
            "be parsed into an integer");
  EXPECT_EQ(Set(o, {"maxclients", "0"}),
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must "
            "be between 1 and 4294967295 inclusive");
  EXPECT_EQ(Set(o, {"proto-max-bulk-len", "10"}),
            "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
            "argument must be between 1048576 and 2147483647 inclusive");
  EXPECT_EQ(Set(o, {"loglevel", "foo"}),
            "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must "
            "be one of the following: debug, verbose, notice, warning, nothing");
  EXPECT_EQ(o.timeout, 0);
  EXPECT_EQ(o.loglevel, "notice");
}

TEST(ConfigSetTest, AppliesAllOrNothing) {
  Options o;
  EXPECT_EQ(Set(o, {"timeout", "10", "hz", "5", "requirepass", "a b"}), std::nullopt);
  EXPECT_EQ(o.timeout, 10);
  EXPECT_EQ(o.hz, 5);
  EXPECT_EQ(o.requirepass, "a b");
  // The second value is bad: the first is not applied either (Redis restores it).
  EXPECT_NE(Set(o, {"timeout", "20", "maxclients", "x"}), std::nullopt);
  EXPECT_EQ(o.timeout, 10);
  EXPECT_EQ(o.maxclients, 10000);
  EXPECT_EQ(Set(o, {"hz", "0"}), std::nullopt);
  EXPECT_EQ(FindConfigDirective("hz")->get(o), "1");
  EXPECT_EQ(Set(o, {"client-query-buffer-limit", "05mb"}), std::nullopt);
  EXPECT_EQ(o.client_query_buffer_limit, 5 * 1024 * 1024);
}

// ---------------------------------------------------------------- logging

TEST(LogSetupTest, LevelsMapToSpdlog) {
  EXPECT_EQ(SpdlogLevel("debug"), spdlog::level::trace);
  EXPECT_EQ(SpdlogLevel("verbose"), spdlog::level::debug);
  EXPECT_EQ(SpdlogLevel("notice"), spdlog::level::info);
  EXPECT_EQ(SpdlogLevel("warning"), spdlog::level::warn);
  EXPECT_EQ(SpdlogLevel("nothing"), spdlog::level::off);
}

TEST(LogSetupTest, WritesRedisStyleLinesToTheLogfile) {
  TempFile file("");
  Options o;
  o.logfile = file.path();
  o.loglevel = "verbose";
  {
    auto logger = MakeLogger(o);
    logger->info("Ready to accept connections tcp");
    logger->warn("Received SIGTERM scheduling shutdown...");
    logger->debug("a verbose line");
    logger->trace("a debug line, filtered at verbose");
  }
  std::ifstream in(file.path());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  const std::string prefix =
      std::to_string(::getpid()) + R"(:M \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} )";
  EXPECT_TRUE(
      std::regex_match(lines[0], std::regex(prefix + R"(\* Ready to accept connections tcp)")))
      << lines[0];
  EXPECT_TRUE(std::regex_match(
      lines[1], std::regex(prefix + R"(# Received SIGTERM scheduling shutdown\.\.\.)")))
      << lines[1];
  EXPECT_TRUE(std::regex_match(lines[2], std::regex(prefix + R"(- a verbose line)"))) << lines[2];
}

TEST(LogSetupTest, MissingLogDirectoryIsRefusedNotCreated) {
  Options o;
  o.logfile = (fs::temp_directory_path() / ("latch_no_such_dir_" + std::to_string(::getpid())) /
               "latchd.log")
                  .string();
  try {
    MakeLogger(o);
    ADD_FAILURE() << "no error for " << o.logfile;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "Can't open the log file: No such file or directory");
  }
  EXPECT_FALSE(fs::exists(fs::path(o.logfile).parent_path()));
}

}  // namespace
}  // namespace latch::config
