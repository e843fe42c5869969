package obs

import "testing"

func TestGone(t *testing.T) {
	if !Gone(Value(Exit{Process: "master", Code: 139})) || Gone(Value(Exit{})) || Gone(Failure[Exit]("docker")) {
		t.Error("Gone")
	}
}
