package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/cachelab/cachelab/internal/scalescenario"
	"github.com/cachelab/cachelab/sim/scenario"
)

// BenchmarkScale plays scalescenario.Text in both worlds at 1k, 10k and 100k
// objects, so that what a tenfold world costs shows (issue 28):
//
//	go test ./sim -run XXX -bench Scale -benchtime 1x -count 3
//
// Each run is a whole sim.Run: both informers, the etcd, and the
// simulator around them.
func BenchmarkScale(b *testing.B) {
	for _, world := range []string{scenario.ServerEtcd, scenario.ServerWatchCache} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/n=%d", world, n), func(b *testing.B) {
				sc, err := scenario.Parse("scale.txt", []byte(scalescenario.Text(n)))
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
