//go:build selftest

// selftest: together

package clipermissions_test

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/clipermissions"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-cli-permissions on real builds") }

var (
	operMaxconn = "src:deb:3.0.11,patch=" + selftest.Mutant("6-cli-level-maxconn-frontend-oper.diff")
	crash       = "src:deb:3.0.11,patch=" + selftest.Mutant("8-crash-show-errors-null-snapshot.diff")
	userSet     = "src:deb:3.0.11,patch=" + selftest.Mutant("6b-cli-level-set-table-user.diff")
)

const mapChange = `SECURITY: "add map /etc/harp/m.map k v" (documented operator) accepted on the user socket and changed [k v0] -> [k v0, k v]`

// Observed: 2.6.12, 3.0.11 and 3.2.26 let a `level user` socket change
// maps and ACLs (the code checks no level; 3.4 requires admin), and 3.0.11
// refuses `set table` there but creates the entry anyway; 3.4.7 keeps every
// level. The first mutant lets an operator socket set a frontend's
// maxconn; the second crashes the worker on `show errors`, whose crash
// evidence must hold the backtrace.
var _ = selftest.Describe(clipermissions.Suite, func() {
	selftest.VerdictsTogether(clipermissions.Suite, func(b selftest.Build, r report.Result) {
		switch b.Spec {
		case selftest.Bookworm.Spec, selftest.Sid.Spec:
			Expect(r.Reason).To(ContainSubstring(mapChange))
		case selftest.Trixie.Spec:
			Expect(r.Reason).To(ContainSubstring(mapChange))
			Expect(r.Reason).To(ContainSubstring(`SECURITY: "set table tbl key harp-new data.gpc0 1" (documented operator) refused on the user socket ("Permission denied") but changed`))
		case userSet:
			Expect(r.Reason).To(ContainSubstring(`SECURITY: "set table tbl key harp-new data.gpc0 1" (documented operator) accepted on the user socket and changed`))
		case operMaxconn:
			Expect(r.Reason).To(ContainSubstring(`operator socket: SECURITY: "set maxconn frontend web 10" (documented admin) accepted on the operator socket and changed status=OPEN slim=100 -> status=OPEN slim=10`))
		case crash:
			Expect(r.Reason).To(ContainSubstring(`"show errors" got no answer at its documented level operator`))
			Expect(r.Crashes).To(HaveLen(1))
			Expect(r.Crashes[0].Signal).To(Equal("Segmentation fault"))
			if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.TrimSpace(string(pat)) == "core" {
				Expect(r.Crashes[0].Backtrace).To(ContainSubstring("cli_io_handler_show_errors"))
			}
		}
		if b.Spec != crash {
			Expect(r.Crashes).To(BeEmpty())
		}
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, "lets a user socket change maps and ACLs"),
		selftest.Build{Spec: "deb:trixie", Want: verdict.Reproduced, Why: "3.0.11: maps, ACLs, and an entry created by a refused set table"},
		selftest.On(selftest.Sid, verdict.Reproduced, "lets a user socket change maps and ACLs"),
		selftest.On(selftest.Experimental, verdict.Pass, "keeps every level"),
		selftest.Build{Spec: operMaxconn, Want: verdict.Reproduced, Why: "the mutant lets an operator set a frontend's maxconn"},
		selftest.Build{Spec: crash, Want: verdict.Reproduced, Why: "the mutant crashes on show errors"},
		selftest.Build{Spec: userSet, Want: verdict.Reproduced, Why: "mutant 6b lets a user socket set a table entry"},
	)
}, Label("slow"))
