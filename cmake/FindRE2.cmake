# FindRE2: RE2, the linear-time regex engine (no backtracking, no recursion:
# user patterns cannot hang or overflow the stack). Uses re2's own CMake
# config where it is installed, else pkg-config (Debian 12's libre2-dev ships
# only re2.pc), and defines the imported target re2::re2 either way.
find_package(re2 CONFIG QUIET)
if(TARGET re2::re2)
  set(RE2_FOUND TRUE)
  return()
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_RE2 QUIET re2)
endif()
find_path(RE2_INCLUDE_DIR re2/re2.h HINTS ${PC_RE2_INCLUDE_DIRS})
find_library(RE2_LIBRARY NAMES re2 HINTS ${PC_RE2_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RE2 REQUIRED_VARS RE2_LIBRARY RE2_INCLUDE_DIR)
if(RE2_FOUND AND NOT TARGET re2::re2)
  find_package(Threads REQUIRED)
  add_library(re2::re2 UNKNOWN IMPORTED)
  set_target_properties(re2::re2 PROPERTIES
    IMPORTED_LOCATION "${RE2_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${RE2_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(RE2_INCLUDE_DIR RE2_LIBRARY)
