# Cross build of the freestanding core for a Cortex-M4 (make arm, tests/scripts/t_arm_build.sh).
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake
# CMAKE_SYSTEM_NAME=Generic makes CMakeLists.txt build only streamfat-core, from the
# same source lists as the host build. Flags: -mcpu=cortex-m4 -mthumb -Os -ffreestanding
# -ffunction-sections -fdata-sections -std=c11 plus the project's warnings (-Wall -Wextra
# -Werror ...), and SF_SMALL_TABLES (the CMake default on bare metal, see config.h).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "archiver")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "ranlib")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "size")

# No linking on bare metal without a linker script: test the compiler with a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# -ffunction-sections -fdata-sections: a firmware linking the archive with --gc-sections
# keeps only what it calls (make size measures exactly that).
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -Os -ffreestanding -ffunction-sections -fdata-sections")
# No build type: -Os above is the whole optimisation setting (and no -DNDEBUG).
set(CMAKE_BUILD_TYPE "" CACHE STRING "build type")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
