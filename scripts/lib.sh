# Shared helpers of scripts/demo, scripts/test and scripts/bench (sourced, not run).

# Runs a command as root (directly when we are root, else through sudo).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages given as arguments that are not installed yet (idempotent:
# no apt-get call at all when everything is present). Returns non-zero, saying which, when a
# package is still not installed afterwards (no network, a wrong name, a broken apt): callers
# stop there instead of building and testing without it.
need_packages() {
  local missing=()
  local p
  for p in "$@"; do
    package_installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  if ! as_root apt-get update -qq; then
    echo "error: apt-get update failed; cannot install: ${missing[*]}" >&2
    return 1
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "error: apt-get install failed for: ${missing[*]}" >&2
    return 1
  fi
  local still=()
  for p in "${missing[@]}"; do
    package_installed "$p" || still+=("$p")
  done
  if [ ${#still[@]} -gt 0 ]; then
    echo "error: still not installed after apt-get install: ${still[*]}" >&2
    return 1
  fi
}

package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# Fails, naming them, when any of the given commands is not on the PATH.
need_commands() {
  local c missing=()
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "error: not found on the PATH: ${missing[*]}" >&2
    return 1
  fi
}

# Adds a deb-src entry for the machine's Debian archive (a copy of its deb822 sources entry
# with `Types: deb-src`), once, so that `apt-get source` works.
need_deb_src() {
  local list=/etc/apt/sources.list.d/emcp-deb-src.sources
  if [ -f "$list" ] || grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ ||
     grep -qs '^deb-src ' /etc/apt/sources.list; then
    return 0
  fi
  local src=/etc/apt/sources.list.d/debian.sources
  if [ ! -f "$src" ]; then
    echo "error: no $src to copy a deb-src entry from; add one for apt-get source" >&2
    return 1
  fi
  echo "== adding $list (deb-src entries for apt-get source)"
  sed 's/^Types: deb$/Types: deb-src/' "$src" | as_root tee "$list" >/dev/null &&
    as_root apt-get update -qq || { echo "error: cannot add the deb-src entry" >&2; return 1; }
}

# need_debian_source PACKAGE VERSION DEST: Debian's source of PACKAGE at VERSION (its
# patches applied) unpacked in DEST, fetched with apt-get source unless DEST already holds that
# version (DEST/.emcp-version).
need_debian_source() {
  local pkg=$1 version=$2 dest=$3
  if [ -f "$dest/.emcp-version" ] && [ "$(cat "$dest/.emcp-version")" = "$version" ]; then
    return 0
  fi
  need_packages dpkg-dev || return 1
  need_deb_src || return 1
  local tmp
  tmp=$(mktemp -d)
  echo "== apt-get source $pkg=$version"
  if ! (cd "$tmp" && apt-get source -qq "$pkg=$version" >/dev/null 2>&1); then
    rm -rf "$tmp"
    echo "error: apt-get source $pkg=$version failed" >&2
    return 1
  fi
  local unpacked
  unpacked=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  rm -rf "$dest"
  mkdir -p "$(dirname "$dest")"
  mv "$unpacked" "$dest" && echo "$version" > "$dest/.emcp-version"
  rm -rf "$tmp"
}

# need_gcc_libgcc DEST: libgcc's sources for the Xtensa lx106 (its config/xtensa assembly,
# libgcc2.c and the headers they include) from Debian's gcc-12-source (the package's tarball of
# GCC's source) in DEST, unless DEST already holds them from that tarball (DEST/.emcp-version).
# Debian's libgcc for xtensa-lx106-elf lacks routines the firmware needs
# (cmake/EmcpXtensaLibgcc.cmake builds them).
need_gcc_libgcc() {
  local dest=$1 tarball
  tarball=$(ls /usr/src/gcc-12/gcc-12*.tar.xz 2>/dev/null | head -n 1)
  if [ -z "$tarball" ]; then
    echo "error: no /usr/src/gcc-12/gcc-12*.tar.xz: apt-get install gcc-12-source" >&2
    return 1
  fi
  if [ -f "$dest/.emcp-version" ] && [ "$(cat "$dest/.emcp-version")" = "$(basename "$tarball")" ]; then
    return 0
  fi
  echo "== unpacking libgcc's Xtensa sources from $tarball"
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -xJf "$tarball" -C "$dest" --strip-components=1 --wildcards '*/libgcc/config/xtensa/*' \
      '*/libgcc/libgcc2.c' '*/libgcc/libgcc2.h' '*/include/longlong.h' '*/COPYING*' &&
    basename "$tarball" > "$dest/.emcp-version"
}

# The shared/ folder (spec texts and test data): $EMCP_SHARED_DIR, else beside the checkout,
# else /work/shared.
find_shared_dir() {
  local root=$1
  local d
  for d in "${EMCP_SHARED_DIR:-}" "$root/../shared" /work/shared; do
    if [ -n "$d" ] && [ -d "$d/testdata/JSONTestSuite" ]; then
      (cd "$d" && pwd)
      return 0
    fi
  done
  echo "error: cannot find the shared/ folder with testdata/JSONTestSuite; set EMCP_SHARED_DIR" >&2
  return 1
}

# python3-yaml: esp32_idf_compiles reads the ESP-IDF components' idf_component.yml; mosquitto:
# the MQTT codec's tests against a real broker (MqttBroker.*).
BASE_PACKAGES=(cmake ninja-build g++ binutils libgtest-dev libmbedtls-dev openssl python3
               python3-yaml mosquitto)
# A real browser for the browser-facing tests (CORS): headless Chromium.
BROWSER_PACKAGES=(chromium)
# A TLS scanner we did not write, judging the server's TLS against docs/http.md (tls_testssl).
TLS_JUDGE_PACKAGES=(testssl.sh)
# A standard reverse proxy in front of a fleet of servers (mcp_fleet_nginx, docs/deploy.md): the
# test runs its own nginx in the foreground; the package's system service is not used.
PROXY_PACKAGES=(nginx)
# Cortex-M firmware and the boards emulated in CI (no recommends: the QEMU package pulls in a
# lot otherwise).
BOARD_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
                libstdc++-arm-none-eabi-dev qemu-system-arm python3 socat
                gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc
                gcc-xtensa-lx106 picolibc-xtensa-lx106-elf gcc-12-source)
# An embedded Linux, the linux-aarch64 configuration: Debian's cross compiler and the target's C
# library, and qemu-user to run what it builds (Mbed TLS and GoogleTest are built for the target
# from their sources: scripts/third-party's, libgtest-dev's).
ELINUX_PACKAGES=(g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
# The benchmark peers (scripts/bench measures against them; scripts/test cross-checks with them).
BENCH_PACKAGES=(rapidjson-dev libyajl-dev libcjson-dev nlohmann-json3-dev pkg-config)
# A real MQTT 5 broker for MCP over MQTT (tests/mcp/lib/broker.mjs starts its own on a free
# loopback port; the clients' side is MQTT.js from npm), and its command-line clients for poking
# at it by hand. The package may start a system broker on 1883: scripts/test stops it (no test
# uses it or any fixed port).
MQTT_PACKAGES=(mosquitto mosquitto-clients)

# Node.js and the pinned npm packages of tests/mcp (the official MCP SDK, ajv, MQTT.js): installs Node
# from Debian when missing, then `npm ci` when package-lock.json changed since the last install.
need_node_packages() {
  local dir=$1
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    need_packages nodejs npm || return 1
  fi
  local stamp="$dir/node_modules/.emcp-lock.sha256"
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "== npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    echo "$want" > "$stamp"
  fi
}
