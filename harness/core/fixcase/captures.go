package fixcase

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// CaptureName is the file a release tag's facts go in
// (fixtures/upstream-fixes/captures): facts-<version>-<commit, 9>.json,
// or facts-<version>-<commit, 9>-<flavor>.json for a build of a flavour
// (asan: the cases only a sanitized build shows).
func CaptureName(tag, commit, flavor string) string {
	name := fmt.Sprintf("facts-%s-%s", strings.TrimPrefix(tag, "v"), commit[:min(9, len(commit))])
	if flavor != "" {
		name += "-" + flavor
	}
	return name + ".json"
}

// captureNameRe reads a capture's version and flavour back.
var captureNameRe = regexp.MustCompile(`^facts-(\d+\.\d+\.\d+)-[0-9a-f]+(?:-([a-z]+))?\.json$`)

// CaptureVersion is the version a capture file holds the facts of ("" for
// no capture's name).
func CaptureVersion(name string) string {
	if m := captureNameRe.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// CaptureFlavor is the build flavour of a capture file ("" for the plain
// build, and for no capture's name).
func CaptureFlavor(name string) string {
	if m := captureNameRe.FindStringSubmatch(name); m != nil {
		return m[2]
	}
	return ""
}

// MergeCaptured puts facts into a capture (its JSON, empty for a new
// one): a case already there is replaced where it stands, a new one is
// added at the end; every other case is kept as it was. The output is the
// captures' form (a list, one-space indents, a final line feed).
func MergeCaptured(existing []byte, facts []Facts) ([]byte, error) {
	var all []json.RawMessage
	if len(strings.TrimSpace(string(existing))) > 0 {
		if err := json.Unmarshal(existing, &all); err != nil {
			return nil, fmt.Errorf("the capture: %w", err)
		}
	}
	at := map[string]int{}
	for i, raw := range all {
		var f struct {
			Case string `json:"case"`
		}
		if err := json.Unmarshal(raw, &f); err != nil || f.Case == "" {
			return nil, fmt.Errorf("the capture's entry %d names no case", i+1)
		}
		at[f.Case] = i
	}
	for _, f := range facts {
		raw, err := marshal(f, "")
		if err != nil {
			return nil, err
		}
		if i, ok := at[f.Case]; ok {
			all[i] = raw
			continue
		}
		at[f.Case] = len(all)
		all = append(all, raw)
	}
	return marshal(all, " ")
}

// marshal is JSON as the captures hold it: <, > and & as they are (the
// answers are HAProxy's text), indented by indent, a final line feed.
func marshal(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
