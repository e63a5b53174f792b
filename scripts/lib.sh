# Shared helpers of scripts/demo, scripts/test and scripts/bench (sourced, not run).

# Runs a command as root (directly when we are root, else through sudo).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages given as arguments that are not installed yet (idempotent:
# no apt-get call at all when everything is present).
need_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
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

BASE_PACKAGES=(cmake ninja-build g++ binutils libgtest-dev)
# The benchmark peers (scripts/bench measures against them; scripts/test cross-checks with them).
BENCH_PACKAGES=(rapidjson-dev libyajl-dev libcjson-dev nlohmann-json3-dev pkg-config)
