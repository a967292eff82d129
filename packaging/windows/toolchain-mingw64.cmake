# CMake toolchain file for a Windows (x86_64) build with Debian's mingw-w64 cross compiler.
#
#   cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=packaging/windows/toolchain-mingw64.cmake \
#         -DPERFLOG_WIN_DEPS=build-win/deps/prefix -DPERFLOG_WERROR=ON
#
# PERFLOG_WIN_DEPS is the prefix packaging/windows/build-deps.sh fills with static SQLite, Jansson
# and libmicrohttpd; pkg-config is confined to it so no Linux library is ever picked up.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(PERFLOG_MINGW_HOST x86_64-w64-mingw32)

# The posix-threads flavour of the compiler: C11 atomics and pthreads (winpthreads) as on Linux.
find_program(CMAKE_C_COMPILER NAMES ${PERFLOG_MINGW_HOST}-gcc-posix ${PERFLOG_MINGW_HOST}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${PERFLOG_MINGW_HOST}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${PERFLOG_MINGW_HOST})

if(NOT PERFLOG_WIN_DEPS)
  set(PERFLOG_WIN_DEPS "${CMAKE_CURRENT_LIST_DIR}/../../build-win/deps/prefix")
endif()
get_filename_component(PERFLOG_WIN_DEPS "${PERFLOG_WIN_DEPS}" ABSOLUTE)
list(APPEND CMAKE_FIND_ROOT_PATH ${PERFLOG_WIN_DEPS})
set(ENV{PKG_CONFIG_LIBDIR} "${PERFLOG_WIN_DEPS}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
# try_compile projects re-read this file; pass the prefix on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PERFLOG_WIN_DEPS)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# One self-contained .exe each: libgcc and winpthreads linked in, no DLLs to ship beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc")
# Tests of the build tree run through wine when a test uses CMAKE_CROSSCOMPILING_EMULATOR.
find_program(PERFLOG_WINE NAMES wine64 wine)
if(PERFLOG_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${PERFLOG_WINE})
endif()
