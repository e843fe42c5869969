#!/usr/bin/env bash
# Installs the Debian packages harp needs when they are missing (make test
# and make test-<issue> call this first, so a fresh machine needs nothing else).
set -euo pipefail
# HARP_DEPS=skip: the make-target test, which only parses harp's flags.
[ "${HARP_DEPS:-}" = skip ] && exit 0
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v cc >/dev/null && command -v make >/dev/null || need+=(build-essential)
command -v patch >/dev/null || need+=(patch)
command -v ccache >/dev/null || need+=(ccache)
command -v gdb >/dev/null || need+=(gdb)
command -v git >/dev/null || need+=(git)
command -v docker-registry >/dev/null || need+=(docker-registry) # a local registry for image: self-tests
command -v promtool >/dev/null && command -v prometheus >/dev/null || need+=(prometheus) # doctor --watch: rules checked, a real Prometheus in self-tests
command -v chromium >/dev/null || need+=(chromium) # doctor --watch: its page checked in a headless browser
[ -e /usr/include/crypt.h ] || need+=(libcrypt-dev)
[ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
# Headers of the full flavour (flavor=full: OpenSSL, Lua, PCRE2, zlib).
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
[ -e /usr/include/lua5.4/lua.h ] || need+=(liblua5.4-dev)
[ -e /usr/include/pcre2.h ] || need+=(libpcre2-dev)
[ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "harp: installing ${need[*]}" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "harp: these Debian packages are needed and harp is not root: ${need[*]}" >&2
    exit 3
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  echo "harp: Docker is not reachable (docker info failed); start the Docker engine" >&2
  exit 3
fi
