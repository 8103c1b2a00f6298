#!/usr/bin/env bash
# Installs the Debian bookworm packages blis needs, only those missing.
# Idempotent and quick when everything is present. Uses apt-get as root,
# sudo otherwise, and says what to do if neither is possible. Arguments are
# more packages to ensure (scripts/fuzz.sh and scripts/lint.sh ask for clang's).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libluajit-5.1-dev
  libboost-dev libboost-filesystem-dev
  libspdlog-dev libfmt-dev
  libtomlplusplus-dev
  catch2
  libcli11-dev
  nlohmann-json3-dev
  libyaml-cpp-dev
  libbenchmark-dev
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "blis: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "blis: error: these packages are missing and I am neither root nor able to use sudo:" >&2
  echo "  ${missing[*]}" >&2
  echo "Install them as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
