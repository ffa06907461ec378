package sim

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/cachelab/cachelab/internal/scalescenario"
)

func TestHeapPerStepTmp(t *testing.T) {
	n := 100000
	world := os.Getenv("HEAP_WORLD")
	if world == "" {
		t.Skip()
	}
	sc, err := Parse("scale.txt", []byte(scalescenario.Text(n)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), sc, Options{Server: world})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keep []any
	for i, st := range sc.Steps {
		sr, err := s.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, sr)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("step %d %s: heap inuse %d MB, sys %d MB\n", i, st.Text, ms.HeapInuse>>20, ms.Sys>>20)
		if i == 6 || i == 7 {
			f, _ := os.Create(fmt.Sprintf("/tmp/i28b/heap-%s-%d.prof", world, i))
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	_ = keep
}
