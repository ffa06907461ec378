package trace_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/trace"
)

// The header's second line names the IDs the scenario covers, and a
// scenario that covers none (a file of one's own with no "# Covers:"
// line) gets no dangling "covers" (issue 27, case 14).
func TestWriteHeaderCovers(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"P1", "E6"}, "# stack default · seed 1 · server etcd · etcd embedded · covers P1 E6\n"},
		{nil, "# stack default · seed 1 · server etcd · etcd embedded\n"},
		{[]string{}, "# stack default · seed 1 · server etcd · etcd embedded\n"},
	} {
		var b strings.Builder
		trace.WriteHeader(&b, trace.Header{Scenario: "x", Title: "X", IDs: tc.ids, Stack: "default", Seed: 1, Server: "etcd", Etcd: "embedded"})
		lines := strings.SplitAfter(b.String(), "\n")
		if len(lines) < 2 || lines[1] != tc.want {
			t.Errorf("IDs %q: got the header\n%s\nwant its second line %q", tc.ids, b.String(), tc.want)
		}
	}
}
