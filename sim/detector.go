package sim

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	cgdetector "k8s.io/client-go/util/consistencydetector"

	"github.com/cachelab/cachelab/consistencydetector"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The data consistency detector in a run (REFERENCE.md V1-V6).
//
// client-go switches its detector on for a whole process, with
// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR read as the process starts; a run
// with a "# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true" line (or
// Options.ConsistencyDetector) switches it on for both sides, client-go's
// and cachelab's, with each package's ForTest setter, for as long as it
// runs (claimProcess: a run with the other setting waits for the runs in
// progress to end). Each run sets both switches, whatever the process's
// own environment said, so that a scenario's trace does not depend on
// where it runs.
//
// With the detector on, each watch-list is followed by a LIST of the end
// bookmark's resourceVersion (a request line on both sides, compared like
// any other). When the two differ, the reflector panics on its own
// goroutine, in either implementation, and utilruntime.HandleCrash*
// recovers it there, runs utilruntime.PanicHandlers, and panics again:
// the process ends, as CI means it to. A simulator that ended there
// could show nothing, so a run contains it: the first panic handler,
// containDetection, recognizes the detector's panic on a goroutine of
// one of the run's sides (by its pprof label, parked.go), records it on
// that side as a "log" line, stops that side's informer (its context,
// as the process's end would have stopped it) and ends the goroutine
// (runtime.Goexit), so that neither the handlers after it nor the
// re-panic run. Every other panic goes on as before: the handler returns
// at once, and utilruntime.ReallyCrash is never touched. The step then
// settles with the informer gone (side.crashed), and both sides'
// lines are compared: both caught it, or the comparison says which did
// not.

// Values of Options.ConsistencyDetector.
const (
	DetectorOn  = "on"
	DetectorOff = "off"
)

// detector reports whether the run has the data consistency detector on:
// Options.ConsistencyDetector, or else the scenario's "# Env:" line.
func (r *runner) detector() bool {
	switch r.opts.ConsistencyDetector {
	case DetectorOn:
		return true
	case DetectorOff:
		return false
	}
	return r.sc.Detector
}

// setDetector switches both implementations' detector for the process,
// and returns what puts back the values it replaced.
func setDetector(on bool) (restore func()) {
	restoreCG := cgdetector.SetDataConsistencyDetectionForWatchListEnabledForTest(on)
	restoreCL := consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(on)
	if on {
		installContainment()
	}
	return func() { restoreCL(); restoreCG() }
}

// detecting is the sides of the runs with the detector on, by their
// goroutines' label (side.id): the sides whose detector panics a run
// contains.
var detecting = struct {
	sync.Mutex
	sides map[string]*side
}{sides: map[string]*side{}}

// watchForDetections makes s's detector panics the run's to contain.
func watchForDetections(s *side) {
	detecting.Lock()
	defer detecting.Unlock()
	detecting.sides[s.id] = s
}

// forgetDetections undoes watchForDetections, once s has stopped.
func forgetDetections(s *side) {
	detecting.Lock()
	defer detecting.Unlock()
	delete(detecting.sides, s.id)
}

var containOnce sync.Once

// installContainment puts containDetection first among the process's
// panic handlers, once.
func installContainment() {
	containOnce.Do(func() {
		utilruntime.PanicHandlers = append([]func(context.Context, any){containDetection}, utilruntime.PanicHandlers...)
	})
}

// containDetection is the panic handler that contains a detection: the
// detector's panic (V5) on a goroutine of a side that watches for one.
// It does not return for those; for any other panic it returns at once.
func containDetection(_ context.Context, p any) {
	msg, ok := p.(string)
	if !ok || !isDetection(msg) {
		return
	}
	detecting.Lock()
	s := detecting.sides[goroutines.OwnLabel(sideLabel)]
	detecting.Unlock()
	if s == nil {
		return
	}
	s.detected(msg)
	runtime.Goexit()
}

// The detector's panic message is "data inconsistency detected for
// <identity>, panicking!" in both implementations (V5).
const (
	detectionPrefix = "data inconsistency detected for "
	detectionSuffix = ", panicking!"
)

func isDetection(msg string) bool {
	return strings.HasPrefix(msg, detectionPrefix) && strings.HasSuffix(msg, detectionSuffix)
}

// detected records the detection on the side, and ends its informer: the
// process would have ended here. The identity, the reflector's name,
// differs between the implementations (client-go names an informer's
// reflector after the file and line that built it), so the line says
// where it stood.
func (s *side) detected(msg string) {
	s.rec.Record(trace.Event{Layer: trace.LayerLog, Kind: trace.KindLog,
		Detail: fmt.Sprintf("reflector: panic %q on its goroutine: utilruntime.HandleCrash ends the process here (ReallyCrash); the simulator stops this informer instead",
			detectionPrefix+"<its name>"+detectionSuffix)})
	s.crashed.Store(true)
	if s.cancel != nil {
		s.cancel()
	}
	if s.fac != nil {
		s.fac.cancel[implIndex(s.impl)]()
	}
}

// cmdWatchListLose is watch-list-lose NS/NAME: each informer's next
// watch-list leaves the object out (world.Conn.LoseFromNextWatchList).
func cmdWatchListLose(r *runner, a scenario.Args) error {
	for _, s := range r.sides {
		s.conn.LoseFromNextWatchList(a.Pos[0])
	}
	why := "nothing in the informers will notice"
	if r.detector() {
		why = "the data consistency detector will compare it with a LIST from etcd"
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("each informer's next watch-list leaves %s out of its initial events, as a watch cache that lost it would: %s", a.Pos[0], why))
	return nil
}
