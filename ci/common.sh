#!/usr/bin/env bash
# ci/common.sh: set-up shared by ci/test and ci/run-specs. Installs missing
# Debian packages (when root), configures and builds. Sourced, not run.
set -euo pipefail

OPSPEC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OPSPEC_BUILD_DIR="${OPSPEC_BUILD_DIR:-$OPSPEC_ROOT/build}"

# Every package the build needs, by Debian name.
OPSPEC_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config
  lld  # links the many test binaries in a third of GNU ld's time (OPSPEC_LLD in CMakeLists.txt)
  libgtest-dev libgmock-dev libbenchmark-dev libabsl-dev
  libyaml-cpp-dev libopenblas-dev libxxhash-dev nlohmann-json3-dev libre2-dev
  libxml2-utils  # xmllint: the CLI tests check that JUnit reports are well-formed XML
  libgraphviz-dev  # optional for users: --report draws compiled graphs as SVG
)

opspec_install_deps() {
  local missing=()
  for pkg in "${OPSPEC_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "opspec: missing packages: ${missing[*]}" >&2
    echo "opspec: install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "opspec: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

opspec_configure_and_build() {
  local build_type="${1:-RelWithDebInfo}"
  shift || true
  # The CUDA backend is built where a toolkit is found, as for users (AUTO),
  # so its toolkit-only tests (NVRTC compiles each fused kernel) run there;
  # GPU tests skip without a device. OPSPEC_CUDA=OFF|ON overrides.
  # Line tables only (-g1) for RelWithDebInfo: backtraces keep file:line, and
  # full debug info was a third of the compile time (kernels/cpu/binary.cc:
  # 38 s with -g, 28 s with -g1, 27 s with none). The libraries compile in
  # unity batches (OPSPEC_UNITY_SOURCES in CMakeLists.txt).
  cmake -S "$OPSPEC_ROOT" -B "$OPSPEC_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DOPSPEC_UNITY_SOURCES=ON \
    -DCMAKE_CUDA_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG -Xcompiler=-g1" \
    -DOPSPEC_CUDA="${OPSPEC_CUDA:-AUTO}" "$@" >/dev/null
  cmake --build "$OPSPEC_BUILD_DIR" -j "$(nproc)"
}
