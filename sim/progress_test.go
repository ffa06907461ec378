package sim_test

import (
	"context"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

// Progress counts what the run did, and may be read while a step runs:
// this test reads it on another goroutine throughout, for the race
// detector to see.
func TestProgress(t *testing.T) {
	sc, err := scenario.Parse("progress.txt", []byte("# Progress.\n\nadd-handler h\n----\n\nbulk-create n=30\n----\n\nstart\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	ses, err := sim.Open(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	done := make(chan struct{})
	read := make(chan sim.Progress)
	go func() {
		var last sim.Progress
		for {
			select {
			case <-done:
				read <- last
				return
			default:
				p := ses.Progress()
				if p.Created < last.Created || p.Relayed < last.Relayed || p.Calls < last.Calls {
					t.Errorf("progress went back: %+v after %+v", p, last)
				}
				last = p
			}
		}
	}()
	for _, st := range sc.Steps {
		if _, err := ses.Step(st); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	<-read
	// 31 watch events: the watch-list's 30 objects and its end bookmark.
	if got, want := ses.Progress(), (sim.Progress{Created: 30, Relayed: 31, Calls: 30}); got != want {
		t.Errorf("Progress() = %+v, want %+v", got, want)
	}
}
