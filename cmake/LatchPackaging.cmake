# Debian packages with CPack, from a Release build tree:
#
#   cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/release -j2 && (cd build/release && cpack -G DEB)
#
# latch-server: latchd, latch-cli, /etc/latch/latchd.conf (a conffile), the systemd unit
#   (Type=notify, hardened like Debian's redis-server unit), man pages, a `latch` system user
#   and /var/lib/latch (created by the postinst).
# latch-dev: headers, static libraries, the CMake package and latch.pc.
# cpack (and `make install`) install what is built: they do not build the whole tree first,
# so packaging a tree where only latchd and the libraries were built works (tests stay unbuilt).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_PACKAGE_NAME latch)
set(CPACK_PACKAGE_VENDOR "latch")
set(CPACK_PACKAGE_CONTACT "latch maintainers <latch@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lock server speaking the Redis protocol")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # debug symbols stay in the build tree
set(CPACK_COMPONENTS_ALL server dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME latch-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION database)
set(CPACK_COMPONENT_SERVER_DESCRIPTION
  "Lock server speaking the Redis protocol (latchd)\n latchd is a drop-in for redis-server as a lock service: SET NX PX, Lua lock\n scripts of the usual client libraries, LOCK.* commands with fencing tokens\n and server-side waiting. It reads a stock redis.conf and runs under systemd.")
# The libraries latchd links (Lua, spdlog, fmt, libstdc++) are found by dpkg-shlibdeps.
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
  "${PROJECT_SOURCE_DIR}/packaging/debian/conffiles;${PROJECT_SOURCE_DIR}/packaging/debian/postinst;${PROJECT_SOURCE_DIR}/packaging/debian/prerm;${PROJECT_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME latch-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "Development files of latch (client, protocol, embeddable server)\n Headers, static libraries, the CMake package (find_package(latch): latch::client,\n latch::protocol, latch::server) and latch.pc for pkg-config.")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "libboost1.81-dev, libspdlog-dev, liblua5.1-0-dev, lua-cjson-dev, lua-bitop-dev, pkg-config")

include(CPack)
