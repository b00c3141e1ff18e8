// The argument notation (see command_args.h) of each command, by full name. Kept apart from
// the registrations so that COMMAND DOCS' hints live in one table.
#include <string_view>
#include <utility>

namespace latch {

std::string_view ArgumentNotation(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kTable[] = {
      {"set",
       "key:key value:string [condition:(NX|XX|IFEQ=ifeq-value:string|IFNE=ifne-value:string|"
       "IFDEQ=ifdeq-digest:string|IFDNE=ifdne-digest:string)] [GET] "
       "[expiration:(EX=seconds:integer|PX=milliseconds:integer|"
       "EXAT=unix-time-seconds:unix-time|PXAT=unix-time-milliseconds:unix-time|KEEPTTL)]"},
      {"setnx", "key:key value:string"},
      {"get", "key:key"},
      {"getdel", "key:key"},
      {"mget", "key:key*"},
      {"mset", "{data: key:key value:string}*"},
      {"msetnx", "{data: key:key value:string}*"},
      {"incr", "key:key"},
      {"decr", "key:key"},
      {"incrby", "key:key increment:integer"},
      {"decrby", "key:key decrement:integer"},
      {"del", "key:key*"},
      {"unlink", "key:key*"},
      {"exists", "key:key*"},
      {"type", "key:key"},
      {"keys", "pattern:pattern"},
      {"scan",
       "cursor:integer [MATCH=pattern:pattern] [COUNT=count:integer] [TYPE=type:string]"},
      {"flushdb", "[flush-type:(ASYNC|SYNC)]"},
      {"flushall", "[flush-type:(ASYNC|SYNC)]"},
      {"shutdown", "[save-selector:(NOSAVE|SAVE)] [NOW] [FORCE] [ABORT]"},
      {"expire", "key:key seconds:integer [condition:(NX|XX|GT|LT)]"},
      {"pexpire", "key:key milliseconds:integer [condition:(NX|XX|GT|LT)]"},
      {"expireat", "key:key unix-time-seconds:unix-time [condition:(NX|XX|GT|LT)]"},
      {"pexpireat", "key:key unix-time-milliseconds:unix-time [condition:(NX|XX|GT|LT)]"},
      {"ttl", "key:key"},
      {"pttl", "key:key"},
      {"expiretime", "key:key"},
      {"pexpiretime", "key:key"},
      {"persist", "key:key"},
      {"ping", "[message:string]"},
      {"echo", "message:string"},
      {"auth", "[username:string] password:string"},
      {"hello",
       "[{arguments: protover:integer [{auth: AUTH=username:string password:string}] "
       "[SETNAME=clientname:string]}]"},
      {"select", "index:integer"},
      {"client|setname", "connection-name:string"},
      {"client|setinfo", "attr:(LIB-NAME=libname:string|LIB-VER=libver:string)"},
      {"client|list",
       "[TYPE=client-type:(NORMAL|MASTER|REPLICA|PUBSUB)] [ID=client-id:integer*]"},
      {"info", "[section:string*]"},
      {"config|get", "parameter:string*"},
      {"config|set", "{data: parameter:string value:string}*"},
      {"command|info", "[command-name:string*]"},
      {"command|docs", "[command-name:string*]"},
      {"watch", "key:key*"},
      {"delex",
       "key:key [condition:(IFEQ=ifeq-value:string|IFNE=ifne-value:string|"
       "IFDEQ=ifdeq-digest:string|IFDNE=ifdne-digest:string)]"},
      {"digest", "key:key"},
      {"delifeq", "key:key value:string"},
      {"lock.acquire", "key:key owner:string ttl-ms:integer [WAIT=timeout-ms:integer]"},
      {"lock.release", "key:key owner:string"},
      {"lock.extend", "key:key owner:string ttl-ms:integer"},
      {"lock.info", "key:key"},
      {"eval", "script:string numkeys:integer [key:key*] [arg:string*]"},
      {"evalsha", "sha1:string numkeys:integer [key:key*] [arg:string*]"},
      {"eval_ro", "script:string numkeys:integer [key:key*] [arg:string*]"},
      {"evalsha_ro", "sha1:string numkeys:integer [key:key*] [arg:string*]"},
      {"script|load", "script:string"},
      {"script|exists", "sha1:string*"},
      {"script|flush", "[flush-type:(ASYNC|SYNC)]"},
  };
  for (const auto& [n, notation] : kTable) {
    if (n == name) return notation;
  }
  return {};
}

}  // namespace latch
