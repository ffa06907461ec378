package consistencydetector_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
	cgdetector "k8s.io/client-go/util/consistencydetector"

	"github.com/cachelab/cachelab/consistencydetector"
)

// reportSwitch, set in a child process's environment, makes the test
// binary print both implementations' switch as its init left it, and
// exit (TestSwitchReadAtProcessStart).
const reportSwitch = "CACHELAB_TEST_REPORT_DETECTOR_SWITCH"

func TestMain(m *testing.M) {
	if os.Getenv(reportSwitch) != "" {
		fmt.Printf("client-go=%t cachelab=%t\n", cgdetector.IsDataConsistencyDetectionForWatchListEnabled(),
			consistencydetector.IsDataConsistencyDetectionForWatchListEnabled())
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
