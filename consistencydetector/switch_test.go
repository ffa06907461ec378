package consistencydetector_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	cgdetector "k8s.io/client-go/util/consistencydetector"

	"github.com/cachelab/cachelab/consistencydetector"
)

// TestSwitchReadAtProcessStart starts this test binary again with
// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR set to each value, and compares
// the switch client-go's init and cachelab's left (V1): strconv.ParseBool's
// true values switch it on; anything else, unparsable included, leaves it
// off.
func TestSwitchReadAtProcessStart(t *testing.T) {
	for _, value := range []string{"true", "1", "t", "TRUE", "True", "false", "0", "", "yes", "on", " true"} {
		t.Run(value, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), reportSwitch+"=1", consistencydetector.EnvWatchList+"="+value)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			line := strings.TrimSpace(string(out))
			cg, cl, _ := strings.Cut(line, " ")
			if strings.TrimPrefix(cg, "client-go=") != strings.TrimPrefix(cl, "cachelab=") {
				t.Errorf("%s=%q: %s", consistencydetector.EnvWatchList, value, line)
			}
		})
	}
}

// TestSwitchForTest is the setter (V1): it switches the check, and the
// function it returns puts back what was there, on both implementations.
func TestSwitchForTest(t *testing.T) {
	type state struct{ ClientGo, Cachelab bool }
	read := func() state {
		return state{cgdetector.IsDataConsistencyDetectionForWatchListEnabled(), consistencydetector.IsDataConsistencyDetectionForWatchListEnabled()}
	}
	start := read()
	if start.ClientGo != start.Cachelab {
		t.Fatalf("at start: %+v", start)
	}
	restoreCG := cgdetector.SetDataConsistencyDetectionForWatchListEnabledForTest(!start.ClientGo)
	restoreCL := consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(!start.Cachelab)
	if got := read(); got != (state{!start.ClientGo, !start.Cachelab}) {
		t.Errorf("after the setter: got %+v, want both %t", got, !start.ClientGo)
	}
	innerCG := cgdetector.SetDataConsistencyDetectionForWatchListEnabledForTest(start.ClientGo)
	innerCL := consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(start.Cachelab)
	innerCG()
	innerCL()
	if got := read(); got != (state{!start.ClientGo, !start.Cachelab}) {
		t.Errorf("after a nested restore: got %+v, want both %t", got, !start.ClientGo)
	}
	restoreCG()
	restoreCL()
	if got := read(); got != start {
		t.Errorf("after restore: got %+v, want %+v", got, start)
	}
}
