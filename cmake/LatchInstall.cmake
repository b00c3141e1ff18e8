# What `cmake --install` puts where, and the CMake package that lets another project use
# latch with find_package(latch):
#
#   bin/latchd, bin/latch-cli                                   component server
#   /etc/latch/latchd.conf (<prefix>/etc/... unless prefix is /usr)   server
#   lib/systemd/system/latchd.service, share/man/man1/*.1      server
#   include/latch/..., lib/liblatch_{protocol,client,server,testing}.a  component dev
#   lib/cmake/latch/latch{Config,ConfigVersion,Targets}.cmake   dev
#   lib/pkgconfig/latch.pc (the client library)                 dev
#
# Targets: latch::protocol, latch::client (Asio client, Lock, Redlock: no Lua, server or
# spdlog), latch::server (the embeddable latch::Server), latch::testing (ScopedServer and the
# test kit, docs/TESTING.md; its headers are the server's). The same names exist as aliases in a
# build that includes latch with add_subdirectory() or FetchContent; there the install rules
# are off unless LATCH_INSTALL is set.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LATCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/latch)

# Public headers: the source folders while building, include/ once installed.
foreach(part protocol client server)
  if(TARGET latch_${part})
    set_target_properties(latch_${part} PROPERTIES
      EXPORT_NAME ${part}
      INTERFACE_INCLUDE_DIRECTORIES
        "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/${part}/include>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
    add_library(latch::${part} ALIAS latch_${part})
  endif()
endforeach()
if(TARGET latch_testing)
  set_target_properties(latch_testing PROPERTIES EXPORT_NAME testing)
  add_library(latch::testing ALIAS latch_testing)
endif()
if(NOT LATCH_INSTALL)
  return()
endif()
foreach(part protocol client server)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${part}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT dev)
endforeach()
# Link-only helpers of the static libraries: they carry no usage requirement to a consumer
# (latch_warnings' flags are build-tree only, robin-map is a header the server compiled in).
set_target_properties(latch_warnings PROPERTIES EXPORT_NAME internal_warnings)
set_target_properties(latch_robin_map PROPERTIES EXPORT_NAME internal_robin_map)

# A server built with Raft (LATCH_CLUSTER) links latch_cluster, a link-only helper too.
set(LATCH_CLUSTER_EXPORT)
if(TARGET latch_cluster)
  set_target_properties(latch_cluster PROPERTIES EXPORT_NAME internal_cluster)
  set(LATCH_CLUSTER_EXPORT latch_cluster)
endif()

install(TARGETS latch_protocol latch_client latch_server latch_testing latch_warnings
  latch_robin_map ${LATCH_CLUSTER_EXPORT}
  EXPORT latchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(EXPORT latchTargets NAMESPACE latch:: DESTINATION ${LATCH_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/latchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/latchConfig.cmake INSTALL_DESTINATION ${LATCH_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/latchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/latchConfig.cmake ${PROJECT_BINARY_DIR}/latchConfigVersion.cmake
  DESTINATION ${LATCH_CMAKE_DIR} COMPONENT dev)

# pkg-config, for the client library (the server needs Lua and spdlog: use CMake for it).
# The prefix is found relative to the .pc file, so an installed tree can be moved.
file(RELATIVE_PATH LATCH_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/latch.pc.in ${PROJECT_BINARY_DIR}/latch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/latch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

install(TARGETS latchd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
if(TARGET latch-cli)
  install(TARGETS latch-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
endif()
# The configuration lives in /etc whenever the prefix is /usr (the .deb, a distribution
# build), and under the prefix otherwise, so that installing into a scratch prefix never
# writes outside it. Decided at install time: cpack and `cmake --install --prefix` pick the
# prefix then.
# (A DESTINATION that is a variable counts as relative to the prefix, hence "../etc".)
install(CODE [[
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(LATCH_INSTALL_ETC "../etc")
  else()
    set(LATCH_INSTALL_ETC "etc")
  endif()
]] COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/conf/latchd.conf DESTINATION "\${LATCH_INSTALL_ETC}/latch"
  COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/latchd.service
  DESTINATION lib/systemd/system COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/latchd.1 ${PROJECT_SOURCE_DIR}/packaging/latch-cli.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT server)
