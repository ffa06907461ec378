package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// scaleScenario is issue 28's: n objects created before the informers
// start, one handler, a few updates, then a compaction and a closed watch,
// which make the reflector relist everything.
func scaleScenario(n int) string {
	w := len(fmt.Sprint(n))
	var b strings.Builder
	fmt.Fprintf(&b, "# %d objects: a sync, a few updates, a relist\n# Covers: none\n\n", n)
	step := func(cmd string) { fmt.Fprintf(&b, "%s\n----\n\n", cmd) }
	step(fmt.Sprintf("bulk-create n=%d", n))
	step("add-handler h")
	step("start")
	for i := 1; i <= 3; i++ {
		step(fmt.Sprintf("update bulk/obj-%0*d labels=(v=2)", w, i))
	}
	step("compact")
	step("close-watch")
	return b.String()
}

// BenchmarkScale plays scaleScenario in both worlds at 1k, 10k and 100k
// objects, so that what a tenfold world costs shows (issue 28):
//
//	go test ./sim -run XXX -bench Scale -benchtime 1x -count 3
//
// Each run is a whole sim.Run: both informers, the etcd, and the
// simulator around them.
func BenchmarkScale(b *testing.B) {
	for _, world := range []string{ServerEtcd, ServerWatchCache} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/n=%d", world, n), func(b *testing.B) {
				sc, err := Parse("scale.txt", []byte(scaleScenario(n)))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					res, err := Run(context.Background(), sc, Options{Server: world})
					if err != nil {
						b.Fatal(err)
					}
					if res.Divergence != nil {
						b.Fatalf("client-go diverged: %v", res.Divergence)
					}
				}
			})
		}
	}
}
