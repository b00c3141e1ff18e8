# Sourced by start-server.sh, test.sh and sanitize.sh: the quick build settings, used whenever
# the tools are installed, so that a fresh clone on two cores builds in minutes (issue 25).
#
#   latch_fast_build_args BUILD_DIR   sets the array latch_build_args to
#     -G Ninja                          when ninja is installed and BUILD_DIR is new (an existing
#                                       tree keeps its generator: CMake refuses to switch) and
#                                       CMAKE_GENERATOR is not set;
#     -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold
#                                       when ld.gold is installed (binutils, with g++): it links
#                                       the test executables in about half of ld.bfd's time.
# Settings passed later on the cmake line (LATCH_CMAKE_ARGS) win over these.

latch_fast_build_args() {
  local dir=$1
  latch_build_args=()
  if [[ -z "${CMAKE_GENERATOR:-}" && ! -f "$dir/CMakeCache.txt" ]] &&
    command -v ninja >/dev/null; then
    latch_build_args+=(-G Ninja)
  fi
  if command -v ld.gold >/dev/null; then
    latch_build_args+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)
  fi
}
