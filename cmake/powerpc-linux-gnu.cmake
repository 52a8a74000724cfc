# Cross build for 32-bit big-endian PowerPC Linux, to run the unit tests under qemu-user
# (tests/scripts/t_bigendian.sh):
#   cmake -S . -B build-ppc -DCMAKE_TOOLCHAIN_FILE=cmake/powerpc-linux-gnu.cmake
#   cmake --build build-ppc --target test_rec ...
#   qemu-ppc build-ppc/tests/test_rec
# Only the unit tests and the test helpers build this way (not the CLI: no zlib, see
# powerpc-stubs/FindZLIB.cmake).
# Executables are linked statically, so qemu-ppc needs no -L sysroot. Debian packages:
# gcc-powerpc-linux-gnu libc6-dev-powerpc-cross qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR powerpc)

set(CMAKE_C_COMPILER powerpc-linux-gnu-gcc)
set(CMAKE_AR powerpc-linux-gnu-ar CACHE FILEPATH "archiver")
set(CMAKE_RANLIB powerpc-linux-gnu-ranlib CACHE FILEPATH "ranlib")

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# 32-bit PowerPC has no 64-bit atomic instructions: the tests' 64-bit atomics (fake clocks,
# counters) are library calls. The core itself uses only 32-bit atomics.
set(CMAKE_C_STANDARD_LIBRARIES "-latomic")

# Run target executables (none at configure time, but CMake asks) through qemu-user.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-ppc)

# zlib (the CLI's, for BLF export) has no PowerPC package: a stub, see the file.
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/powerpc-stubs")

set(CMAKE_FIND_ROOT_PATH /usr/powerpc-linux-gnu)
# pkg-config must not offer the host's libraries (liburing): only the target's, if any.
set(ENV{PKG_CONFIG_LIBDIR} /usr/powerpc-linux-gnu/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
