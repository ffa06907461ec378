package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
)

// Options.OnRealWait hears each relist backoff cachelab's reflector
// starts, the wait a run spends on the real clock (client-go waits its
// own there, setClock): the delays the trace prints, and none in a run
// that never relists. explore lets another placement run meanwhile.
func TestOnRealWaitHearsEachRelistBackoff(t *testing.T) {
	for name, want := range map[string]int{"relist-after-compaction": 1, "add-update-delete": 0} {
		t.Run(name, func(t *testing.T) {
			sc, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var heard []string
			res, err := Run(context.Background(), sc.WithoutExpectations(), Options{Seed: 1, OnRealWait: func(d time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				heard = append(heard, fmt.Sprintf("relist after backoff %v", d.Round(time.Millisecond)))
			}})
			if err != nil {
				t.Fatal(err)
			}
			var traced []string
			for _, sr := range res.Steps {
				for _, line := range strings.Split(trace.StepOutput(sr), "\n") {
					if _, backoff, ok := strings.Cut(line, "reflector        "); ok && strings.HasPrefix(backoff, "relist after backoff") {
						traced = append(traced, backoff)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(traced) != want || strings.Join(heard, "\n") != strings.Join(traced, "\n") {
				t.Errorf("heard:\n%s\nwant the trace's %d relist backoffs:\n%s", strings.Join(heard, "\n"), want, strings.Join(traced, "\n"))
			}
		})
	}
}
