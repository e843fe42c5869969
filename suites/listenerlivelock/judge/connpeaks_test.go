package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestConnPeaks(t *testing.T) {
	var p ConnPeaks
	p.AddFrontend(cliout.StatRow{Fields: map[string]string{"scur": "40", "slim": "100"}})
	p.AddFrontend(cliout.StatRow{Fields: map[string]string{"scur": "10", "slim": "50"}})
	p.AddProcess(cliout.Info{"CurrConns": "70", "Maxconn": "800"})
	p.AddProcess(cliout.Info{"CurrConns": "20", "Maxconn": "400"})
	if want := (ConnPeaks{Frontend: 40, FrontendLimit: 50, Process: 70, ProcessLimit: 400}); p != want {
		t.Errorf("%+v, want %+v", p, want)
	}
}

func TestConnPeaksReached(t *testing.T) {
	p := ConnPeaks{Frontend: 100, FrontendLimit: 100, Process: 100, ProcessLimit: 800}
	if hit, _ := p.Reached(false); !hit {
		t.Error("the frontend at its limit")
	}
	if hit, what := p.Reached(true); hit || what != "the process never reached its maxconn (peak 100 of 800)" {
		t.Errorf("the process below its limit: %v %q", hit, what)
	}
	if hit, _ := (ConnPeaks{}).Reached(false); hit {
		t.Error("no limit read is no limit reached")
	}
}
