package failedreload

import (
	"fmt"
	"strings"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/suites/conformance/failedreload/judge"
)

// The checks a break's reg-test reads, as harp names them: where any of
// them fails for that break, the test fails. The others need what VTest
// cannot read (the worker's pid from before, the master's /proc status).
var regTestChecks = []string{judge.CheckMasterSurvives, judge.CheckCounted, judge.CheckOldWorkerServes,
	judge.CheckTableKept, judge.CheckNextReload, judge.CheckNewWorkerServes}

// RegTests writes each break as a reg-test: the master CLI's reload of a
// config with the break's line, then what harp checks that VTest reads.
// harp signals the master where the test asks its CLI: both reach the same
// reload (mworker_reload), and 3.0 and later answer the CLI's with its
// outcome, hence the version limit.
func RegTests() ([]suite.RegTest, []suite.NoRegTest, error) {
	var tests []suite.RegTest
	var not []suite.NoRegTest
	for _, b := range Breaks {
		check := fmt.Sprintf("%s/{%s}.%s", judge.SuiteID, strings.Join(regTestChecks, ","), b.ID)
		if b.Peers {
			not = append(not, suite.NoRegTest{Check: check, Kind: "failed-reload",
				Reason: "a peers section whose local peer is an address of harp's node, parsed before the error: not written yet"})
			continue
		}
		tests = append(tests, suite.RegTest{Check: check, Kind: "failed-reload",
			File: "mcli/mcli_failed_reload_" + strings.ReplaceAll(b.ID, "-", "_") + ".vtc", Text: regTest(b)})
	}
	return tests, not, nil
}

func regTest(b Break) string {
	line := strings.ReplaceAll(b.Line, "/etc/harp/", "${tmpdir}/")
	var w strings.Builder
	fmt.Fprintf(&w, "varnishtest \"%s: a reload with %s changes nothing, and the next reload works\"\n\n", judge.SuiteID, b.Name)
	for _, l := range []string{
		"# Exported by harp from its property " + judge.SuiteID + " (suites/conformance/failedreload);",
		"# `harp reg-tests export` writes it again. The master CLI's reload of a config with",
		"# " + b.Name + " fails; show proc counts it; the worker from before still answers and",
		"# holds its table entry; with the config fixed, the next reload succeeds and its worker",
		"# answers. It ends on a reload that succeeds: a master stopped while its last reload",
		"# failed exits 0 from 3.1 (130 on 3.0), which the runner reads as a failure.",
	} {
		w.WriteString(l + "\n")
	}
	w.WriteString("#REGTEST_TYPE=bug\n\nfeature ignore_unknown_macro\n")
	w.WriteString("feature cmd \"$HAPROXY_PROGRAM -cc 'version_atleast(3.0-dev0)'\"\n\n")
	// The frontend is the last section: the break's line is appended to it.
	w.WriteString(`haproxy h1 -W -S -conf {
    global
        nbthread 2

    defaults
        mode http
        timeout connect 2s
        timeout client 10s
        timeout server 10s

    backend tbl
        stick-table type string len 32 size 1k expire 1h store gpc0

    backend ok
        http-request return status 200 content-type text/plain string ok

    frontend web
        bind "fd@${web}"
        http-request track-sc0 req.hdr(x-key) table tbl
        default_backend ok
} -start

# Before: the worker answers and holds an entry.
client c1 -connect ${h1_web_sock} {
    txreq -hdr "x-key: probe"
    rxresp
    expect resp.status == 200
} -run
haproxy h1 -cli {
    send "set table tbl key keep-1 data.gpc0 1; show table tbl key keep-1"
    expect ~ "gpc0=1"
}

`)
	fmt.Fprintf(&w, "# The break: %s.\nshell {\n    printf '%%s\\n' '    %s' >> \"${h1_name}/cfg\"\n}\n", b.Name, line)
	w.WriteString(`haproxy h1 -mcli {
    send "reload"
    expect ~ "Success=0"
}
haproxy h1 -mcli {
    send "show proc"
    expect ~ "\\[failed: 1\\]"
}
client c2 -connect ${h1_web_sock} {
    txreq
    rxresp
    expect resp.status == 200
} -run
haproxy h1 -cli {
    send "show table tbl key keep-1"
    expect ~ "gpc0=1"
}

# The config fixed: the next reload succeeds and its worker answers.
shell {
    sed -i '$d' "${h1_name}/cfg"
}
haproxy h1 -mcli {
    send "reload"
    expect ~ "Success=1"
}
client c3 -connect ${h1_web_sock} {
    txreq
    rxresp
    expect resp.status == 200
} -run
`)
	return w.String()
}
