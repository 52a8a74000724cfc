# Cross build of the freestanding core for bare-metal AArch64 with clang (examples/nvme,
# make hw-nvme, tests/scripts/t_hw_nvme.sh):
#   cmake -S . -B build-hw/core-a64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-none-elf-clang.cmake
# CMAKE_SYSTEM_NAME=Generic makes CMakeLists.txt build only streamfat-core. Debian has no
# aarch64 bare-metal C library: the firmware brings its own memcpy & co. (examples/nvme).
# -mstrict-align: with the MMU off every data access is Device memory, where an unaligned
# access faults. -mgeneral-regs-only: no FP/SIMD registers, so the start-up need not enable
# them and the core's code stays integer-only.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER clang)
set(CMAKE_C_COMPILER_TARGET aarch64-none-elf)
set(CMAKE_AR llvm-ar CACHE FILEPATH "archiver")
set(CMAKE_RANLIB llvm-ranlib CACHE FILEPATH "ranlib")

set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a53 -mstrict-align -mgeneral-regs-only -O2 -ffreestanding -fno-builtin -ffunction-sections -fdata-sections -isystem ${CMAKE_CURRENT_LIST_DIR}/../examples/nvme/libc/include")
set(CMAKE_BUILD_TYPE "" CACHE STRING "build type")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
