package cliout

import (
	"fmt"
	"regexp"
	"strings"
)

// Build is what `haproxy -vv` says of how the binary was built: its
// target (linux-glibc, linux-musl, ...) and its feature list (+DL, -ZLIB,
// ...), the facts a check whose expected text or behaviour depends on the
// build reads before it expects anything.
type Build struct {
	Target   string
	Features map[string]bool // name (DL, THREAD, OPENSSL, ...) -> built with it
	// ASan: compiled with AddressSanitizer (-fsanitize=address among the
	// build options' flags, as harp's asan flavour and upstream's CI build it).
	ASan bool
}

var (
	targetRe   = regexp.MustCompile(`(?m)^\s*TARGET\s*=\s*(\S+)`)
	featuresRe = regexp.MustCompile(`(?m)^Feature list\s*:\s*(.*)$`)
	// The flag in the CFLAGS line of the build options.
	asanRe = regexp.MustCompile(`(?m)^\s*CFLAGS\s*=.*-fsanitize=address\b`)
)

// ParseBuild reads the target and the feature list of `haproxy -vv`. A
// text without a feature list is an error: nothing can be said of the
// build's features then.
func ParseBuild(vv string) (Build, error) {
	b := Build{Features: map[string]bool{}, ASan: asanRe.MatchString(vv)}
	if m := targetRe.FindStringSubmatch(vv); m != nil {
		b.Target = m[1]
	}
	m := featuresRe.FindStringSubmatch(vv)
	if m == nil {
		return b, fmt.Errorf("haproxy -vv has no feature list")
	}
	for _, f := range strings.Fields(m[1]) {
		if len(f) > 1 && (f[0] == '+' || f[0] == '-') {
			b.Features[f[1:]] = f[0] == '+'
		}
	}
	return b, nil
}

// Capabilities a check may need, each from -vv's facts: a check needing
// one the build lacks is not applicable there.
var Capabilities = map[string]string{
	// HAProxy dumps its loaded libraries (-dL, show libs) only where
	// built with dl_iterate_phdr: USE_DL on glibc (HA_HAVE_DUMP_LIBS).
	"dump-libs": "the library dump (USE_DL on glibc)",
	"threads":   "multi-threading (USE_THREAD)",
	"openssl":   "OpenSSL (USE_OPENSSL)",
	"lua":       "Lua (USE_LUA)",
	"pcre":      "PCRE or PCRE2 (USE_PCRE, USE_PCRE2)",
	// An out-of-bounds access or a use after free that a plain build
	// survives without a sign aborts a sanitized one.
	"asan": "AddressSanitizer (the asan flavour)",
}

// Has says whether the build has the capability, and if not, why not in
// words (a feature it lacks, or a fact -vv does not give).
func (b Build) Has(capability string) (bool, string) {
	feature := func(name string) (bool, string) {
		on, listed := b.Features[name]
		switch {
		case !listed:
			return false, fmt.Sprintf("the feature list does not name %s", name)
		case !on:
			return false, fmt.Sprintf("built without %s (-%s)", name, name)
		}
		return true, ""
	}
	switch capability {
	case "dump-libs":
		if ok, why := feature("DL"); !ok {
			return false, why
		}
		if !strings.Contains(b.Target, "glibc") {
			return false, fmt.Sprintf("target %q is not a glibc one (the dump needs glibc's dl_iterate_phdr)", b.Target)
		}
		return true, ""
	case "threads":
		return feature("THREAD")
	case "openssl":
		return feature("OPENSSL")
	case "lua":
		return feature("LUA")
	case "asan":
		if !b.ASan {
			return false, "built without -fsanitize=address (not the asan flavour)"
		}
		return true, ""
	case "pcre":
		if ok, _ := feature("PCRE2"); ok {
			return true, ""
		}
		return feature("PCRE")
	}
	return false, fmt.Sprintf("no capability %q is known", capability)
}
