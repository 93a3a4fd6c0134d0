# FindXXHash: Debian's libxxhash-dev ships no CMake config, only a header and a
# library; this finds them and defines the imported target XXHash::xxhash.
find_path(XXHASH_INCLUDE_DIR xxhash.h)
find_library(XXHASH_LIBRARY NAMES xxhash)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XXHash REQUIRED_VARS XXHASH_LIBRARY XXHASH_INCLUDE_DIR)
if(XXHash_FOUND AND NOT TARGET XXHash::xxhash)
  add_library(XXHash::xxhash UNKNOWN IMPORTED)
  set_target_properties(XXHash::xxhash PROPERTIES
    IMPORTED_LOCATION "${XXHASH_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIR}")
endif()
mark_as_advanced(XXHASH_INCLUDE_DIR XXHASH_LIBRARY)
