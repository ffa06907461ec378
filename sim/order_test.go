package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/trace"
)

// The comparison catches an ordering bug: with tombstones delivered after
// an update, the relist of missed-delete-tombstone hands h1 the same
// calls as client-go, in another order. Comparing each layer sorted by
// key, as the runner once did, saw no difference; comparing fixed places
// exactly and only map-order batches as multisets does. (REFERENCE P2:
// the default stack delivers a relist's tombstones first.)
func TestPlantedOrderingBugIsCaught(t *testing.T) {
	sc, err := Load("missed-delete-tombstone")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Seed: 1, Plant: "tombstones-last"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Divergence
	if d == nil {
		t.Fatal("tombstones delivered after an update: no divergence reported")
	}
	if d.Layer != "handler/h1" || !strings.HasPrefix(d.Cmd, "reconnect") {
		t.Fatalf("divergence at step %d %q, layer %q; want the relist after reconnect, in handler/h1:\n%s", d.Step, d.Cmd, d.Layer, d.Diff)
	}
	// The same calls, in another order: the diff moves a line, it does
	// not add or lose one.
	var removed, added []string
	for _, l := range strings.Split(d.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			removed = append(removed, l[1:])
		case strings.HasPrefix(l, "+"):
			added = append(added, l[1:])
		}
	}
	if len(removed) != 1 || len(added) != 1 || removed[0] != added[0] {
		t.Errorf("the diff does not show one call moving:\n%s", d.Diff)
	}
	var cl, cg []string
	for _, e := range res.Steps[len(res.Steps)-1].Sides[trace.Cachelab] {
		if e.Layer == "handler/h1" {
			cl = append(cl, e.Text())
		}
	}
	for _, e := range res.Steps[len(res.Steps)-1].Sides[trace.ClientGo] {
		if e.Layer == "handler/h1" {
			cg = append(cg, e.Text())
		}
	}
	t.Logf("cachelab (planted bug):\n  %s\nclient-go:\n  %s", strings.Join(cl, "\n  "), strings.Join(cg, "\n  "))
}
