package craftedupdatesobeyreceiver

import (
	"strings"
	"testing"
)

// pyMinimal are the modules Debian's python3-minimal holds that the
// repro.Python reproducer may import (shutil and tempfile are not among them).
var pyMinimal = map[string]bool{"os": true, "re": true, "select": true, "signal": true, "socket": true, "struct": true, "subprocess": true, "sys": true, "time": true}

func TestPythonImports(t *testing.T) {
	text := reproScript
	for _, l := range strings.Split(string(text), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "import" || f[0] == "from") && !pyMinimal[f[1]] {
			t.Errorf("the repro.Python reproducer imports %s, which python3-minimal lacks or harp has not checked: %q", f[1], l)
		}
	}
}
