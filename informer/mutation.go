package informer

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/store"
)

// The cache mutation detector (client-go: mutation_detector.go). Objects
// in an informer's cache are shared by every reader, so a handler that
// changes one changes the cache behind the informer's back: one of the
// commonest informer bugs. With KUBE_CACHE_MUTATION_DETECTOR=true in the
// environment when the program starts (or Options.DetectMutations), the
// informer keeps a deep copy of every object it adds or updates and, every
// second of real time, compares each with its copy; copies are kept about
// two minutes. A difference prints "CACHE <type>[i] ALTERED!" with both
// objects side by side, then panics "cache <type> modified" (or calls
// Options.OnMutation). It costs a copy of everything: for tests only.

// mutationDetectionEnabled is read once, as client-go reads it.
var mutationDetectionEnabled, _ = strconv.ParseBool(os.Getenv("KUBE_CACHE_MUTATION_DETECTOR"))

// mutationDetector is the detector; a nil one does nothing.
type mutationDetector struct {
	name           string
	period, retain time.Duration
	fail           func(message string) // nil: panic
	report         io.Writer            // where ALTERED reports go

	addedMu sync.Mutex
	added   []cachedCopy

	compareMu   sync.Mutex
	cached      []cachedCopy
	retained    []cachedCopy
	lastRotated time.Time
}

type cachedCopy struct{ cached, copied any }

func newMutationDetector(name string, on bool, fail func(string), report io.Writer) *mutationDetector {
	if !on && !mutationDetectionEnabled {
		return nil
	}
	klog.Warningln("Mutation detector is enabled, this will result in memory leakage.")
	if report == nil {
		report = os.Stdout
	}
	return &mutationDetector{name: name, period: time.Second, retain: 2 * time.Minute, fail: fail, report: report}
}

// add remembers obj and a deep copy of it (tombstones and objects that
// cannot be copied are not watched).
func (d *mutationDetector) add(obj any) {
	if d == nil {
		return
	}
	if _, ok := obj.(store.DeletedFinalStateUnknown); ok {
		return
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return
	}
	c := o.DeepCopyObject()
	d.addedMu.Lock()
	defer d.addedMu.Unlock()
	d.added = append(d.added, cachedCopy{cached: o, copied: c})
}

// run compares every period until stop is closed.
func (d *mutationDetector) run(stop <-chan struct{}) {
	if d == nil {
		return
	}
	for {
		if d.lastRotated.IsZero() {
			d.lastRotated = time.Now()
		} else if time.Since(d.lastRotated) > d.retain {
			d.retained, d.cached = d.cached, nil
			d.lastRotated = time.Now()
		}
		d.compare()
		select {
		case <-stop:
			return
		case <-time.After(d.period):
		}
	}
}

func (d *mutationDetector) compare() {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()
	d.addedMu.Lock()
	d.cached = append(d.cached, d.added...)
	d.added = nil
	d.addedMu.Unlock()
	altered := false
	for _, list := range [][]cachedCopy{d.cached, d.retained} {
		for i, c := range list {
			if !reflect.DeepEqual(c.cached, c.copied) {
				fmt.Fprintf(d.report, "CACHE %s[%d] ALTERED!\n%v\n", d.name, i, diff.ObjectGoPrintSideBySide(c.cached, c.copied))
				altered = true
			}
		}
	}
	if !altered {
		return
	}
	msg := fmt.Sprintf("cache %s modified", d.name)
	if d.fail != nil {
		d.fail(msg)
		return
	}
	panic(msg)
}
