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

# TLS (tls-port, rediss://) through Boost.Asio's ssl stream.
find_package(OpenSSL QUIET)
latch_require(OPENSSL_FOUND "libssl-dev" "OpenSSL (libssl-dev)")

# Lua 5.1, the dialect Redis embeds, for EVAL/EVALSHA (server/src/scripting/).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LUA51 QUIET IMPORTED_TARGET lua5.1)
endif()
latch_require(LUA51_FOUND "liblua5.1-0-dev" "Lua 5.1 (pkg-config lua5.1)")
# The cjson and bit libraries Redis gives scripts, as Debian packages them for Lua 5.1
# (struct and cmsgpack are our own, in server/src/scripting/).
if(PkgConfig_FOUND)
  pkg_check_modules(LUA51_CJSON QUIET IMPORTED_TARGET lua5.1-cjson)
  pkg_check_modules(LUA51_BITOP QUIET IMPORTED_TARGET lua5.1-bitop)
endif()
latch_require(LUA51_CJSON_FOUND "lua-cjson-dev" "lua-cjson for Lua 5.1 (pkg-config lua5.1-cjson)")
latch_require(LUA51_BITOP_FOUND "lua-bitop-dev" "LuaBitOp for Lua 5.1 (pkg-config lua5.1-bitop)")

# libraft (the C Raft library under dqlite, 0.15 in Debian 12) and libuv, its I/O, for
# latch_cluster (issue 23, docs/CLUSTER.md). LATCH_CLUSTER defaults to on when both are found
# (decided at the first configure: installing them later needs -DLATCH_CLUSTER=ON); turned on
# without them, configuration stops with the packages to install.
if(PkgConfig_FOUND)
  pkg_check_modules(RAFT QUIET IMPORTED_TARGET raft>=0.15)
  pkg_check_modules(LIBUV QUIET IMPORTED_TARGET libuv)
endif()
if(RAFT_FOUND AND LIBUV_FOUND)
  set(LATCH_CLUSTER_DEFAULT ON)
else()
  set(LATCH_CLUSTER_DEFAULT OFF)
endif()
option(LATCH_CLUSTER "Build latch_cluster (Raft on libraft and libuv)" ${LATCH_CLUSTER_DEFAULT})
if(LATCH_CLUSTER)
  latch_require(RAFT_FOUND "libraft-dev" "libraft 0.15 or later (pkg-config raft)")
  latch_require(LIBUV_FOUND "libuv1-dev" "libuv (pkg-config libuv)")
endif()

# liburing (2.3 in Debian 12) for io-engine uring (server/src/net/uring_ring.cpp). Optional:
# without it latchd builds, and `io-engine uring` stops its start with the reason.
if(PkgConfig_FOUND)
  pkg_check_modules(LIBURING QUIET IMPORTED_TARGET liburing>=2.1)
endif()
option(LATCH_URING "Build io-engine uring (needs liburing)" ${LIBURING_FOUND})
if(LATCH_URING)
  latch_require(LIBURING_FOUND "liburing-dev" "liburing (pkg-config liburing)")
endif()

# libpq for the reservation demo (demo/reservation). Optional: without it the demo is skipped,
# the rest of latch builds. Its tests also need a PostgreSQL server's binaries (initdb,
# postgres), found here and checked when the tests run.
if(LATCH_BUILD_DEMO)
  if(PkgConfig_FOUND)
    pkg_check_modules(LIBPQ QUIET IMPORTED_TARGET libpq)
  endif()
  if(LIBPQ_FOUND)
    add_library(latch_libpq INTERFACE)
    target_link_libraries(latch_libpq INTERFACE PkgConfig::LIBPQ)
  else()
    message(WARNING "The reservation demo (demo/reservation) is skipped: it needs libpq "
                    "(pkg-config libpq); install it with `apt-get install libpq-dev`")
  endif()
  file(GLOB LATCH_PG_INITDBS /usr/lib/postgresql/*/bin/initdb)
  if(LATCH_PG_INITDBS)
    list(SORT LATCH_PG_INITDBS COMPARE NATURAL ORDER DESCENDING)
    list(GET LATCH_PG_INITDBS 0 LATCH_PG_INITDB)
    get_filename_component(LATCH_PG_BINDIR ${LATCH_PG_INITDB} DIRECTORY)
  else()
    set(LATCH_PG_BINDIR "/usr/lib/postgresql/15/bin")  # the tests say to install postgresql
  endif()
endif()

if(LATCH_BUILD_TESTS)
  find_package(GTest QUIET CONFIG)
  latch_require(GTest_FOUND "libgtest-dev" "GoogleTest")
endif()
if(LATCH_BUILD_BENCH)
  find_package(benchmark QUIET CONFIG)
  latch_require(benchmark_FOUND "libbenchmark-dev" "Google Benchmark")
endif()
