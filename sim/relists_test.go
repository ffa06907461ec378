package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A world that refuses every LIST (a resource it does not serve, a user
// it does not let list) would have the reflector retry for ever, each
// retry a trace line that settling took for progress: the run hung. It
// now ends the step with an error that says so, once cachelab's
// reflector has begun maxRelists relist backoffs in it. Here every LIST
// of both sides is answered 403, re-armed as each backoff begins.
func TestSettleGivesUpOnAWorldThatRefusesEveryList(t *testing.T) {
	parallelIn(t, informer.Classic)
	sc, err := scenario.Parse("refused.txt", []byte("# s\n# Server: etcd\n\ncreate ns0/a\n----\n\nstart stack=classic\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	var sess *Session
	armed := make(chan struct{})
	refuse := func() {
		for _, s := range sess.r.sides {
			s.conn.SetFailNext("list", 403, 0)
		}
	}
	sess, err = Open(context.Background(), sc, Options{Seed: 1, OnRealWait: func(time.Duration) { <-armed; refuse() }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Step(sc.Steps[0]); err != nil {
		t.Fatal(err)
	}
	refuse()
	close(armed)
	_, err = sess.Step(sc.Steps[1])
	if err == nil || !strings.Contains(err.Error(), "cachelab's informer cannot list: its reflector has begun 4 relist backoffs in this step") ||
		!strings.Contains(err.Error(), "403 Forbidden") {
		t.Fatalf("a world refusing every LIST: %v; want the error that says the informer cannot list", err)
	}
}
