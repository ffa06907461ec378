package htmlview

import (
	"io"
	"testing"
)

// The page of a 10,000-object run: what --output html adds to a run's
// cost.
//
//	go test ./sim/trace/htmlview -run XXX -bench Write -benchmem
func BenchmarkWrite(b *testing.B) {
	r := bulkRun(10000)
	for b.Loop() {
		if err := Write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
