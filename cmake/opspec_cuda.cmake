# opspec_cuda.cmake: the optional CUDA backend (kernels/cuda/). Included by
# the top-level CMakeLists.txt once opspec_runtime exists. See Note [CUDA build].
#
# Note [CUDA build]
# OPSPEC_CUDA=AUTO (the default) builds the backend when a CUDA compiler and
# toolkit are found, ON requires them, OFF never builds it. When built,
# kernels/cuda/*.cc and *.cu go into opspec_runtime itself (one library,
# whatever the build), which links cudart and NVRTC (and loads cuBLAS when a
# product first needs it), and only
# kernels/device_backends.cc is compiled with OPSPEC_HAS_CUDA: nothing else
# knows whether CUDA was built (See Note [Device seam] in
# runtime/core/device_hooks.h). Device code is compiled for Hopper (sm_90
# SASS) plus compute_75 PTX that any newer GPU can JIT; override with
# -DCMAKE_CUDA_ARCHITECTURES. --fmad=false keeps device arithmetic free of
# contracted multiply-adds, as -ffp-contract=off does on the host, so the
# shared functors round the same on both (See Note [Shared elementwise
# functors]). .cu files hold kernels and thin launchers only (no absl, no
# dispatcher headers), which keeps nvcc's share of a cold build small.

set(OPSPEC_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (when a CUDA toolkit is found), ON or OFF")
set_property(CACHE OPSPEC_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${OPSPEC_CUDA}" _opspec_cuda_mode)
if(NOT _opspec_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "OPSPEC_CUDA must be AUTO, ON or OFF, not '${OPSPEC_CUDA}'")
endif()

set(OPSPEC_CUDA_ENABLED OFF)
if(NOT _opspec_cuda_mode STREQUAL "OFF")
  # Defaults that must be set before the language is enabled.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING "CUDA architectures opspec's kernels are built for")
  endif()
  if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}" CACHE FILEPATH "Host compiler nvcc uses")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(OPSPEC_CUDA_ENABLED ON)
    endif()
  endif()
  if(NOT OPSPEC_CUDA_ENABLED AND _opspec_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "OPSPEC_CUDA=ON but no usable CUDA toolkit was found (nvcc: '${CMAKE_CUDA_COMPILER}', "
                        "CUDAToolkit_FOUND: '${CUDAToolkit_FOUND}'). Put nvcc on PATH or set CMAKE_CUDA_COMPILER, "
                        "or configure with -DOPSPEC_CUDA=OFF.")
  endif()
endif()
unset(_opspec_cuda_mode)

if(NOT OPSPEC_CUDA_ENABLED)
  message(STATUS "opspec: CUDA backend off (OPSPEC_CUDA=${OPSPEC_CUDA})")
  return()
endif()

enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "opspec: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
# C++20 in .cu files too (nvcc 12+ with g++ 12 handles it). CMake before 3.26
# does not know nvcc's C++20 flag; it is taught here.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
# opspec_runtime exists already, so its CUDA properties are set on it; the
# variables serve targets made later. One cudart for the whole program: the
# shared one, which CUDA::cudart names (not CMake's default cudart_static too).
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
# Its CUDA_ARCHITECTURES too: it was initialized, empty, before the language
# was enabled, and CMake refuses to generate with it empty.
set_target_properties(opspec_runtime PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
                                                CUDA_RUNTIME_LIBRARY Shared
                                                CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
if(CCACHE_PROGRAM)
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
  set_property(TARGET opspec_runtime PROPERTY CUDA_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
endif()

file(GLOB _opspec_cuda_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cc ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cu)
list(FILTER _opspec_cuda_sources EXCLUDE REGEX "_test\\.(cc|cu)$")
target_sources(opspec_runtime PRIVATE ${_opspec_cuda_sources})
# cuBLAS and NVRTC are dlopened on first use, not linked (See Note [Loading
# CUDA libraries lazily] in kernels/cuda/lazy_library.h); their headers come
# with CUDA::cudart's.
target_link_libraries(opspec_runtime PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
target_compile_options(opspec_runtime PRIVATE
  "$<$<COMPILE_LANGUAGE:CUDA>:--fmad=false;--expt-relaxed-constexpr;-Xcompiler=-Wall,-Wno-unused-parameter>")
# The seam: the only file that knows the backend was built.
set_source_files_properties(${PROJECT_SOURCE_DIR}/kernels/device_backends.cc
  PROPERTIES COMPILE_DEFINITIONS OPSPEC_HAS_CUDA)
unset(_opspec_cuda_sources)

if(OPSPEC_BUILD_TESTS)
  file(GLOB _opspec_cuda_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/cuda/*_test.cc)
  if(_opspec_cuda_tests)
    opspec_add_tests(opspec_cuda_tests SOURCES ${_opspec_cuda_tests} LIBS opspec_runtime opspec_harness CUDA::cudart)
  endif()
  unset(_opspec_cuda_tests)
  # A process loads libcudart only; cuBLAS and NVRTC wait for their first use
  # (See Note [Loading CUDA libraries lazily]). The loader's log names each library it finds.
  add_test(NAME opspec_start_loads_no_cuda_toolkit_library
    COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=libs $<TARGET_FILE:opspec> list --fixtures)
  set_tests_properties(opspec_start_loads_no_cuda_toolkit_library PROPERTIES
    PASS_REGULAR_EXPRESSION "libcudart" FAIL_REGULAR_EXPRESSION "libnvrtc|libcublas")
endif()
