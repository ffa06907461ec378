package sim

import (
	"flag"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Every run must stop everything it started: etcd, both informers, every
// watch relay and every handler held by the scenario.
//
// The package's tests play every built-in scenario in both stacks and
// both worlds, draw and open every page, and explore: under -race on two
// cores that is about ten minutes, go test's default limit. Left at that
// default, the limit is 20 minutes here (CI's budget is 30 for all); one
// given with -timeout is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		_ = f.Value.Set("20m")
	}
	goleak.VerifyTestMain(m)
}
