# Every dependency comes from Debian 12's archive. A missing one stops configuration
# with the package to install, so a newcomer never has to guess.
function(latch_require found package what)
  if(NOT ${found})
    message(FATAL_ERROR "latch needs ${what}: install it with `apt-get install ${package}`")
  endif()
endfunction()

find_package(Threads REQUIRED)

find_package(Boost 1.81 QUIET CONFIG)
latch_require(Boost_FOUND "libboost1.81-dev" "Boost 1.81 (Asio, Beast)")

find_path(TSL_ROBIN_MAP_INCLUDE tsl/robin_map.h)
latch_require(TSL_ROBIN_MAP_INCLUDE "robin-map-dev" "tsl::robin_map")
add_library(latch_robin_map INTERFACE)
target_include_directories(latch_robin_map SYSTEM INTERFACE ${TSL_ROBIN_MAP_INCLUDE})

find_package(spdlog QUIET CONFIG)
latch_require(spdlog_FOUND "libspdlog-dev" "spdlog")

# Lua 5.1, the dialect Redis embeds, for EVAL/EVALSHA (server/src/scripting/).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LUA51 QUIET IMPORTED_TARGET lua5.1)
endif()
latch_require(LUA51_FOUND "liblua5.1-0-dev" "Lua 5.1 (pkg-config lua5.1)")

if(LATCH_BUILD_TESTS)
  find_package(GTest QUIET CONFIG)
  latch_require(GTest_FOUND "libgtest-dev" "GoogleTest")
endif()
if(LATCH_BUILD_BENCH)
  find_package(benchmark QUIET CONFIG)
  latch_require(benchmark_FOUND "libbenchmark-dev" "Google Benchmark")
endif()
