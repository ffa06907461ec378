// Package golden compares a test's output with a file kept beside the
// test, or rewrites the file when the test runs with its -update flag.
// It is for tests only.
package golden

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check compares got with file, line by line; with update it writes got
// to file instead. what names the output in the message.
func Check(t testing.TB, file, got string, update bool, what string) {
	t.Helper()
	if update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Errorf("%s differs from %s (-want +got; -update rewrites it):\n%s", what, file, d)
	}
}
