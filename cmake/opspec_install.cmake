# opspec_install.cmake: install rules and the CMake package, so that other
# projects can `find_package(opspec)` and link opspec::runtime, opspec::harness,
# opspec::gtest, ... Included at the end of the top-level CMakeLists.txt, after
# every target exists. See Note [Installed package].
#
# Note [Installed package]
# The package is the static libraries, their headers (under include/, at the
# same paths as in the source tree, so `#include "runtime/ops/ops.h"` works in
# both), the export set opspecTargets.cmake (namespace opspec::) and
# opspecConfig.cmake, which finds every dependency the exported targets name.
# Static libraries carry their PRIVATE dependencies as $<LINK_ONLY:...> link
# items, so the config finds those too (OpenMP, BLAS, xxHash, yaml-cpp,
# nlohmann_json, RE2), not only the PUBLIC ones (Threads, absl, GTest), and, in a
# build with the CUDA backend (See Note [CUDA build]), the CUDA toolkit
# (cudart and NVRTC; cuBLAS is loaded at run time): OPSPEC_PACKAGE_CUDA below tells the config.
# The builtin fixtures (fixtures/, an OBJECT library so that their
# OPSPEC_FIXTURE static registrars are never dropped by the linker) are
# installed as object files: linking opspec::fixtures puts them into the
# consumer's executable, exactly as in the build tree. A project that wants
# only its own fixtures simply does not link it.
# When opspec is used through add_subdirectory/FetchContent by another project,
# nothing is installed unless OPSPEC_INSTALL is turned on.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(OPSPEC_INSTALL "Generate the install rules and the CMake package" ${PROJECT_IS_TOP_LEVEL})
if(NOT OPSPEC_INSTALL)
  return()
endif()

set(OPSPEC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/opspec" CACHE STRING
    "Where opspecConfig.cmake is installed, relative to the prefix")

# opspec_runtime is declared outside opspec_add_part, which sets EXPORT_NAME
# for the harness libraries.
set_target_properties(opspec_runtime PROPERTIES EXPORT_NAME runtime)
# opspec_warnings is an INTERFACE target every library links PRIVATE; static
# libraries export it as $<LINK_ONLY:opspec_warnings>, which names no file and
# no flag, but the export set must contain it. Exported as opspec::warnings.
set_target_properties(opspec_warnings PROPERTIES EXPORT_NAME warnings)

# The libraries, in dependency order; a harness folder still being written has
# no target yet (opspec_add_part skips it), so only existing ones are listed.
set(_opspec_install_libs opspec_warnings opspec_runtime)
foreach(_t opspec_harness opspec_program opspec_expect opspec_spec opspec_gtest opspec_cli)
  if(TARGET ${_t})
    list(APPEND _opspec_install_libs ${_t})
  endif()
endforeach()

install(TARGETS ${_opspec_install_libs}
  EXPORT opspecTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(TARGET opspec_fixtures)
  install(TARGETS opspec_fixtures
    EXPORT opspecTargets
    OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/opspec/fixtures)
endif()

if(TARGET opspec)
  # Exported as opspec::opspec so downstream tests can run the builtin command.
  install(TARGETS opspec EXPORT opspecTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Headers: the public ones of the runtime and the harness, at their source
# paths (with the .def tables the op headers include). Not installed:
# internal/ folders (what only the library's own sources include), test
# utilities (*_test_util.h) and kernels/ (backends register into the
# dispatcher; users reach ops through runtime/ops/ops.h and Library).
# ci/check-layers keeps runtime/ and harness/ from including kernels/.
foreach(_dir runtime harness)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${_dir}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.def"
    PATTERN "internal" EXCLUDE
    PATTERN "*_test_util.h" EXCLUDE
    PATTERN "testdata" EXCLUDE)
endforeach()

install(EXPORT opspecTargets
  NAMESPACE opspec::
  FILE opspecTargets.cmake
  DESTINATION ${OPSPEC_INSTALL_CMAKEDIR})

# Whether the installed runtime library links CUDA (substituted into opspecConfig.cmake).
if(OPSPEC_CUDA_ENABLED)
  set(OPSPEC_PACKAGE_CUDA TRUE)
else()
  set(OPSPEC_PACKAGE_CUDA FALSE)
endif()

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/opspecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/opspecConfig.cmake
  INSTALL_DESTINATION ${OPSPEC_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/opspecConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may break the API
install(FILES
  ${PROJECT_BINARY_DIR}/opspecConfig.cmake
  ${PROJECT_BINARY_DIR}/opspecConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindXXHash.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindRE2.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindGraphviz.cmake
  ${PROJECT_SOURCE_DIR}/cmake/opspec_functions.cmake
  DESTINATION ${OPSPEC_INSTALL_CMAKEDIR})

unset(_opspec_install_libs)
