// Package exercise is chapter 6's lab: tell a failure story as a scenario
// (story.txt), and check that it shows what it should, with cachelab and
// client-go side by side:
//
//	go test -tags lab -v ./notebooks/06-failure-stories/exercise
//
// The reference solution is solution/story.txt; try without it first.
package exercise

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// run is one run of a story, shared by the checks.
type run struct {
	res *sim.Result
	err error
}

// Checks are the behaviours the story must show. The story runs once,
// with cachelab's informer and client-go's over one embedded etcd,
// compared at every step; each check then reads the trace.
func Checks(path string) []lab.Check {
	var once sync.Once
	var r run
	get := func() run {
		once.Do(func() {
			src, err := os.ReadFile(path)
			if err != nil {
				r.err = err
				return
			}
			sc, err := scenario.Parse(path, src)
			if err != nil {
				r.err = err
				return
			}
			r.res, r.err = sim.Run(context.Background(), sc, sim.Options{Seed: 1})
		})
		return r
	}
	check := func(f func(*sim.Result) error) func() error {
		return func() error {
			r := get()
			if r.err != nil {
				return fmt.Errorf("the story does not run, so client-go and cachelab cannot be compared: %v", r.err)
			}
			return f(r.res)
		}
	}
	return []lab.Check{
		{ID: "all", Behaviour: "the story runs; client-go agrees at every step", Run: check(func(res *sim.Result) error {
			if d := res.Divergence; d != nil {
				return fmt.Errorf("client-go's informer and cachelab's differ at %s (step %q), layer %s:\n%s", d.Pos, d.Cmd, d.Layer, d.Diff)
			}
			return nil
		})},
		{ID: "F4", Behaviour: "the informer loses its watch", Run: check(func(res *sim.Result) error {
			if find(res, `^reflector$`, `^watch ended`) == "" {
				return fmt.Errorf("neither client-go's informer nor cachelab's ever lost its watch: try disconnect (or close-watch)")
			}
			return nil
		})},
		{ID: "E6", Behaviour: "the cache goes stale: a write it does not see at once", Run: check(func(res *sim.Result) error {
			if staleKey(res) == "" {
				return fmt.Errorf("every write reached client-go's cache (and cachelab's) in the step that made it: write while the informer is disconnected")
			}
			return nil
		})},
		{ID: "E7/F5", Behaviour: "a 410 Gone forces a relist", Run: check(func(res *sim.Result) error {
			if find(res, `^watch$`, `ERROR 410`) == "" {
				return fmt.Errorf("client-go's informer never got a 410 Gone: compact etcd while it is away, after it has watched for a second (advance 1s), so that it re-watches from an old resourceVersion")
			}
			return nil
		})},
		{ID: "P3", Behaviour: "the missed delete arrives as a tombstone", Run: check(func(res *sim.Result) error {
			if find(res, `^handler/`, `OnDelete DeletedFinalStateUnknown`) == "" {
				return fmt.Errorf("client-go's handler never heard OnDelete(DeletedFinalStateUnknown{...}): delete an object the informer had cached while it is away, and make it relist")
			}
			return nil
		})},
		{ID: "P2", Behaviour: "in the end the cache equals etcd again", Run: check(func(res *sim.Result) error {
			etcd, cache := replay(res)
			for k, v := range etcd {
				if cache[k] != v {
					return fmt.Errorf("at the end etcd holds %s@%s but client-go's cache (as cachelab's) holds %q: let the informer catch up (reconnect)", k, v, cache[k])
				}
			}
			for k, v := range cache {
				if _, ok := etcd[k]; !ok {
					return fmt.Errorf("at the end client-go's cache (as cachelab's) still holds %s@%s, which etcd no longer has: let the informer catch up (reconnect)", k, v)
				}
			}
			return nil
		})},
	}
}

// find returns the first trace line of cachelab's side (or the world's)
// whose layer and text match, or "".
func find(res *sim.Result, layer, text string) string {
	lr, tr := regexp.MustCompile(layer), regexp.MustCompile(text)
	for _, st := range res.Steps {
		for _, l := range append(append([]trace.Event(nil), st.World...), st.Sides["cachelab"]...) {
			if lr.MatchString(l.Layer) && tr.MatchString(l.Text()) {
				return l.Text()
			}
		}
	}
	return ""
}

var (
	etcdWrite = regexp.MustCompile(`^(create|update|delete) (\S+)`)
	objRV     = regexp.MustCompile(`(\S+)@(\d+)`)
)

// staleKey is a key written to etcd in a step whose trace shows no
// indexer change for it, after the informer started; "" if none.
func staleKey(res *sim.Result) string {
	started := false
	for _, st := range res.Steps {
		if strings.HasPrefix(st.Cmd, "start") {
			started = true
			continue
		}
		if !started {
			continue
		}
		for _, w := range st.World {
			m := etcdWrite.FindStringSubmatch(w.Text())
			if w.Layer != "etcd" || m == nil {
				continue
			}
			seen := false
			for _, l := range st.Sides["cachelab"] {
				if l.Layer == "indexer" && l.Key == w.Key {
					seen = true
				}
			}
			if !seen {
				return w.Key
			}
		}
	}
	return ""
}

// replay rebuilds, from the trace, what etcd and the cache hold at the
// end (key -> resourceVersion).
func replay(res *sim.Result) (etcd, cache map[string]string) {
	etcd, cache = map[string]string{}, map[string]string{}
	for _, st := range res.Steps {
		for _, l := range st.World {
			if l.Layer != "etcd" {
				continue
			}
			m := etcdWrite.FindStringSubmatch(l.Text())
			if m == nil {
				continue
			}
			objs := objRV.FindAllStringSubmatch(l.Text(), -1)
			switch m[1] {
			case "delete":
				delete(etcd, l.Key)
			default:
				last := objs[len(objs)-1]
				etcd[last[1]] = last[2]
			}
		}
		for _, l := range st.Sides["cachelab"] {
			if l.Layer != "indexer" {
				continue
			}
			objs := objRV.FindAllStringSubmatch(l.Text(), -1)
			switch {
			case strings.HasPrefix(l.Text(), "delete"):
				delete(cache, l.Key)
			case len(objs) > 0:
				last := objs[len(objs)-1]
				cache[last[1]] = last[2]
			}
		}
	}
	return etcd, cache
}
