package explore

import (
	"os"
	"strconv"
	"testing"

	"github.com/cachelab/cachelab/internal/loadgen"
)

func TestMain(m *testing.M) {
	loadgen.MaybeRun() // a test's load process (load_test.go) runs no tests
	os.Exit(m.Run())
}

// getenvInt is the environment variable's value as a number, or -1 when
// it is not set.
func getenvInt(t *testing.T, name string) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number from 0", name, s)
	}
	return n
}
