#!/usr/bin/env bash
# Installs the Debian packages a make target needs when they are missing,
# and no more: a user who wants one verdict on a Debian build does not wait
# for a compiler, a browser or a registry to install.
#
# usage: scripts/deps.sh [PROFILE...] [--for "SPEC..."]
#   run      a verdict on a deb: or image: build: Docker (checked, never
#            installed), mmdebstrap, gdb (backtraces of crashes)
#   source   src:, git:, URL and patched builds: the compiler, patch, ccache,
#            git, libcrypt's headers, CA certificates (downloads)
#   full     the full flavour's headers (OpenSSL, Lua, PCRE2, zlib)
#   monitor  the monitor's self-tests: Prometheus (promtool), Chromium
#   images   the image self-tests: a local registry (docker-registry)
#   regtests reg-tests of a compiled build, run on this machine against its
#            binary: Debian's varnishtest (varnish)
#   all      every profile (make test)
# --for SPECS adds what those build specs need (source for any spec that is
# compiled, full for flavor=full) to run.
#
# HARP_DEPS=skip: do nothing (the make-target test, which only parses
# harp's flags); HARP_DEPS=list: print "harp deps: PROFILES: PACKAGES"
# and install nothing.
set -euo pipefail
[ "${HARP_DEPS:-}" = skip ] && exit 0

profiles=()
while [ $# -gt 0 ]; do
	case $1 in
	--for)
		[ $# -ge 2 ] || { echo "harp: deps.sh: --for needs the build specs" >&2; exit 3; }
		profiles+=(run)
		for spec in $2; do
			case $spec in
			deb:* | image:*) ;;
			*) profiles+=(source) ;;
			esac
			case $spec in *flavor=full*) profiles+=(source full) ;; esac
		done
		shift 2 ;;
	run | source | full | monitor | images | regtests) profiles+=("$1"); shift ;;
	all) profiles+=(run source full monitor images regtests); shift ;;
	*) echo "harp: deps.sh: no profile $1 (run, source, full, monitor, images, regtests, all; --for SPECS)" >&2; exit 3 ;;
	esac
done
[ ${#profiles[@]} -gt 0 ] || profiles=(run)
has() { case " ${profiles[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

# Each package once, with the check that says it is there.
need=() listed=()
want() { # want PACKAGE CHECK...: PACKAGE unless CHECK succeeds
	local pkg=$1; shift
	case " ${listed[*]} " in *" $pkg "*) return ;; esac
	listed+=("$pkg")
	"$@" >/dev/null 2>&1 || need+=("$pkg")
}
if has run; then
	want mmdebstrap command -v mmdebstrap
	want gdb command -v gdb
fi
if has source; then
	want build-essential sh -c 'command -v cc && command -v make'
	want patch command -v patch
	want ccache command -v ccache
	want git command -v git
	want libcrypt-dev test -e /usr/include/crypt.h
	want ca-certificates test -e /etc/ssl/certs/ca-certificates.crt
fi
if has full; then
	want libssl-dev test -e /usr/include/openssl/ssl.h
	want liblua5.4-dev test -e /usr/include/lua5.4/lua.h
	want libpcre2-dev test -e /usr/include/pcre2.h
	want zlib1g-dev test -e /usr/include/zlib.h
fi
if has monitor; then
	want prometheus sh -c 'command -v promtool && command -v prometheus' # rules checked, a real Prometheus
	want chromium command -v chromium                                    # the status page in a headless browser
fi
if has images; then
	want docker-registry command -v docker-registry # a local registry for image: self-tests
fi
if has regtests; then
	want varnish command -v varnishtest # runs the .vtc files against a binary built here
fi

if [ "${HARP_DEPS:-}" = list ]; then
	uniq=$(printf '%s\n' "${profiles[@]}" | awk '!seen[$0]++' | tr '\n' ' ')
	echo "harp deps: ${uniq% }: ${listed[*]}"
	exit 0
fi
if [ ${#need[@]} -gt 0 ]; then
	echo "harp: installing ${need[*]}" >&2
	if [ "$(id -u)" != 0 ]; then
		echo "harp: these Debian packages are needed and harp is not root: ${need[*]}" >&2
		exit 3
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# The monitor's tools without what they only recommend (exporters,
	# fonts, desktop helpers); the others as Debian installs them.
	plain=() bare=()
	for p in "${need[@]}"; do
		case $p in prometheus | chromium | docker-registry) bare+=("$p") ;; *) plain+=("$p") ;; esac
	done
	[ ${#plain[@]} -eq 0 ] || apt-get install -y -qq "${plain[@]}" >/dev/null
	[ ${#bare[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${bare[@]}" >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
	echo "harp: Docker is not reachable (docker info failed); start the Docker engine" >&2
	exit 3
fi
