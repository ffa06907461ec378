package sim

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/recording"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// In a replay (Options.Replay, the CLI's "cachelab replay"), a run has
// no etcd and no kube-apiserver: both informers ask one scripted server
// (recording.Server) that answers from a session an informer recorded
// on a cluster ("cachelab record"), on the scenario's clock.
//
// The scenario is made from the session (Replay.Scenario): a handler, the
// recorded informer's start (its namespace and selectors), then one
// "advance" to each moment the server had something new to say (an
// event, a watch error, a new list), and a "fail-next" before a moment a
// LIST or WATCH failed at. Each step settles when each informer has
// reached the server's resourceVersion at that moment, as on a cluster,
// and compares the two implementations as everywhere. At each step, the
// lines the session holds for that span of time (the requests with their
// statuses, the handler calls the recorded informer made) are shown as
// sim lines, and at the end (ReplayDifference) the handler calls of
// cachelab's replayed informer are held to the recorded informer's.

// ServerReplay is the world of a replay.
const ServerReplay = "replay"

// Replay is a recorded session to replay.
type Replay struct {
	Session *recording.Session
	History *recording.History
}

// NewReplay arranges a session for replay; an error says what in it
// cannot be replayed, and where.
func NewReplay(s *recording.Session) (*Replay, error) {
	h, err := recording.NewHistory(s)
	if err != nil {
		return nil, err
	}
	return &Replay{Session: s, History: h}, nil
}

// HasCalls reports whether the session holds the recorded informer's
// handler calls, for ReplayDifference to hold the replay to.
func (rp *Replay) HasCalls() bool {
	return slices.ContainsFunc(rp.Session.Lines, func(l recording.Line) bool { return l.Kind == recording.KindHandler })
}

// Scenario is the session as a scenario to run (see the top of this
// file). Its steps are placed in the session file, not in the text it is
// made from, so that every message that names a step's file:line names a
// line of the session the user has: the session line for the handler and
// the start, and for each later step the line that made its moment (or
// the LIST or WATCH that failed, for a fail-next).
func (rp *Replay) Scenario() (*scenario.Scenario, error) {
	text, lines := rp.scenarioText()
	if len(lines) > MaxReplaySteps {
		return nil, fmt.Errorf("%s:%d: the replay passes %d steps here (a step for each moment the recorded server said something new), "+
			"the most a replay takes: %s", rp.Session.File, lines[MaxReplaySteps], MaxReplaySteps, recording.TooMuch)
	}
	sc, err := scenario.Parse(rp.Session.File+" (as a scenario)", []byte(text))
	var pe *scenario.ParseError
	switch {
	case errors.As(err, &pe):
		// Only the session line's namespace and selectors come from the
		// session into the text: the start is what cannot be replayed.
		return nil, fmt.Errorf("%s:1: the recorded informer's start cannot be replayed: %s", rp.Session.File, pe.Msg)
	case err != nil:
		return nil, fmt.Errorf("the replay's scenario: %w", err)
	case len(sc.Steps) != len(lines):
		return nil, fmt.Errorf("the replay's scenario has %d steps, made from %d moments of %s (a bug in cachelab)", len(sc.Steps), len(lines), rp.Session.File)
	}
	sc.Name = strings.TrimSuffix(filepath.Base(rp.Session.File), filepath.Ext(rp.Session.File))
	sc.File = rp.Session.File
	for i := range sc.Steps {
		sc.Steps[i].Line = lines[i]
	}
	return sc, nil
}

// MaxReplaySteps is the most steps a replay takes: one per moment of
// the session, each settled and compared, with the server's state
// rebuilt from its segment's start at each, so that 10,000 steps replay
// in about half a minute and many more in hours (recording.MaxLines says
// what was measured).
const MaxReplaySteps = 10_000

// ScenarioText is the scenario's text.
func (rp *Replay) ScenarioText() string {
	text, _ := rp.scenarioText()
	return text
}

// scenarioText is the scenario's text, and for each of its steps the
// session's line it stands for.
func (rp *Replay) scenarioText() (string, []int) {
	hd := rp.Session.Header
	var b strings.Builder
	var lines []int
	step := func(line int, format string, a ...any) {
		fmt.Fprintf(&b, format, a...)
		lines = append(lines, line)
	}
	scope := "every namespace"
	if hd.Namespace != "" {
		scope = "namespace " + hd.Namespace
	}
	// The session's words, on a comment line: escaped, so that no
	// newline in them can end it (trace.Escape).
	fmt.Fprintf(&b, "# Replay of what an informer of %s in %s received from %s%s.\n", hd.Resource, scope,
		trace.Escape(orUnknown(hd.Server, "a server")), trace.Escape(prefixed(", recorded ", hd.Began)))
	fmt.Fprintf(&b, "# The server is the recording: every LIST and WATCH is answered from it, at the moments it says.\n")
	fmt.Fprintf(&b, "# Server: any\n\n")
	step(1, "add-handler h1\n----\n\n")
	start := "start"
	if hd.Resource != scenario.DefaultResource {
		start += " informer=" + hd.Resource
	}
	if hd.Namespace != "" {
		start += " namespace=" + hd.Namespace
	}
	if hd.Labels != "" {
		start += " labels=(" + hd.Labels + ")"
	}
	if hd.Fields != "" {
		start += " fields=(" + hd.Fields + ")"
	}
	step(1, "%s\n----\n", start)
	failed := rp.History.Failed
	var clock time.Duration
	for _, at := range rp.moments() {
		for len(failed) > 0 && failed[0].At <= at {
			// A scenario's fail-next takes a status with a name (its
			// trace names it); one without (a proxy's 499) is left out,
			// as a failure with no status is.
			if f := failed[0]; f.Code >= 400 && f.Code <= 599 && http.StatusText(f.Code) != "" {
				step(rp.Session.LineNo(f.Line), "\nfail-next %s=%d\n----\n", f.Verb, f.Code)
			}
			failed = failed[1:]
		}
		if at > clock {
			step(rp.lineAt(at), "\nadvance %s\n----\n", at-clock)
			clock = at
		}
	}
	return b.String(), lines
}

// lineAt is the number of the session's line that made moment at: the
// first at that moment that a server said (a LIST, a WATCH, an event) or
// the end line, else the first at that moment.
func (rp *Replay) lineAt(at time.Duration) int {
	first := 0
	for i, l := range rp.Session.Lines {
		if time.Duration(l.At).Round(recording.Resolution) != at {
			continue
		}
		switch l.Kind {
		case recording.KindList, recording.KindWatch, recording.KindEvent, recording.KindEnd:
			return rp.Session.LineNo(i)
		}
		if first == 0 {
			first = rp.Session.LineNo(i)
		}
	}
	return first
}

// moments are the history's moments, the failures' and the recording's
// end, after 0.
func (rp *Replay) moments() []time.Duration {
	out := rp.History.Moments()
	for _, f := range rp.History.Failed {
		out = append(out, f.At)
	}
	if n := len(rp.Session.Lines); n > 0 {
		out = append(out, time.Duration(rp.Session.Lines[n-1].At).Round(recording.Resolution))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// replayWorld is a recording played back (Options.Replay): its server
// answers every LIST and WATCH from the recording, at the moments it
// says. It keeps the next session line to show (noteRecorded) and the
// calls of cachelab's handler h1 so far.
type replayWorld struct {
	quietWorld
	r      *runner
	played *recording.Server
	next   int
	calls  []string
}

// connect makes the replay's server and both sides of start's informer.
func (w *replayWorld) connect() error {
	r := w.r
	w.played = recording.NewServer(r.opts.Replay.History, r.clock)
	sides, err := r.newPair("", r.res)
	if err != nil {
		return err
	}
	r.sides = sides
	return nil
}

func (w *replayWorld) describe(h *trace.Header) {
	h.Etcd, h.Replay = "none: the server is a recording", replayHeader(w.r.opts.Replay)
}

func (w *replayWorld) server(_ string, _ *listwatch.Resource, i int, _, _ string, _ *trace.Recorder) (func(ns string) world.Server, int, error) {
	return func(string) world.Server { return world.ReplayServer{Server: w.played} }, i + 1, nil
}

func (w *replayWorld) revision() (int64, error) { return w.played.RV(), nil }

// rv is the resourceVersion an informer has once it has all the
// recording's server has said by now.
func (w *replayWorld) rv() string { return strconv.FormatInt(w.played.RV(), 10) }

// reached: a bookmark at the resourceVersion the informer has moves
// nothing: the server's watches having said all that is due, and the
// connection having passed it on, is what says it came.
func (w *replayWorld) reached(s *side, _ int64) bool {
	return rvAtLeast(s.inf.lastSyncRV(), w.rv()) && w.played.Quiet() && s.conn.Delivered()
}

func (w *replayWorld) truth() string { return "the recording" }

// listAt is the recording's objects at rv.
func (w *replayWorld) listAt(_ *startConfig, rv string) (map[string]string, error) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("resourceVersion %q is not the recording's", rv)
	}
	objs, ok := w.r.opts.Replay.History.StateAtRV(n)
	if !ok {
		return nil, fmt.Errorf("the recording does not hold resourceVersion %s", rv)
	}
	out := make(map[string]string, len(objs))
	for k, o := range objs {
		out[k] = trace.Describe(&unstructured.Unstructured{Object: o})
	}
	return out, nil
}

func (w *replayWorld) stepped(*trace.StepResult, time.Time) { w.noteRecorded() }

// noteRecorded shows, as sim lines, what the session holds from the
// replay's last moment to now: each try of each request, and the
// recorded informer's handler calls.
func (w *replayWorld) noteRecorded() {
	r := w.r
	now := w.played.Now()
	lines := r.opts.Replay.Session.Lines
	for w.next < len(lines) {
		l := lines[w.next]
		if time.Duration(l.At).Round(recording.Resolution) > now {
			break
		}
		w.next++
		switch l.Kind {
		case recording.KindRequest:
			status := strconv.Itoa(l.Status)
			if l.Status == 0 {
				status = l.Error
			}
			r.note(trace.LayerSim, "", fmt.Sprintf("recorded at %v: %s %s -> %s", time.Duration(l.At).Round(recording.Resolution), l.Method, l.URI, status))
		case recording.KindHandler:
			r.note(trace.LayerSim, l.Key, fmt.Sprintf("recorded at %v: the recorded informer's handler: %s", time.Duration(l.At).Round(recording.Resolution), recordedCall(l)))
		}
	}
}

// took keeps the calls of cachelab's handler h1 among a step's events,
// for ReplayDifference.
func (w *replayWorld) took(events []trace.Event) {
	for _, e := range events {
		if e.Kind != trace.KindCall || e.Handler != "h1" || e.Informer != "" || e.Key == "" {
			continue
		}
		call := e.Op + " " + e.Key + "@" + e.RV
		switch {
		case e.Op == "OnUpdate":
			call = "OnUpdate " + e.Key + "@" + e.PrevRV + " -> " + e.Key + "@" + e.RV
		case strings.HasSuffix(e.Detail, initialListMark):
			call += initialListMark
		case e.Op == "OnDelete" && strings.Contains(e.Detail, "DeletedFinalStateUnknown"):
			call += " (final state unknown)"
		}
		w.calls = append(w.calls, call)
	}
}

// recordedCall is a recorded handler call as replayWorld.took writes one.
func recordedCall(l recording.Line) string {
	switch l.Call {
	case "OnAdd(initial)":
		return "OnAdd " + l.Key + "@" + l.RV + initialListMark
	case "OnUpdate":
		return "OnUpdate " + l.Key + "@" + l.OldRV + " -> " + l.Key + "@" + l.RV
	case "OnDelete(final state unknown)":
		return "OnDelete " + l.Key + "@" + l.RV + " (final state unknown)"
	}
	return l.Call + " " + l.Key + "@" + l.RV
}

// ReplayDifference, after a replay, says how the handler calls of
// cachelab's replayed informer differ from those the recorded informer
// made, or "" if they are the same. An initial list's calls come in map
// order, so each run of them compares as a set.
func (s *Session) ReplayDifference() string {
	r := s.r
	w, ok := r.where.(*replayWorld)
	if !ok {
		return ""
	}
	var recorded []string
	for _, l := range r.opts.Replay.Session.Lines {
		if l.Kind == recording.KindHandler {
			recorded = append(recorded, recordedCall(l))
		}
	}
	got, want := sortInitial(w.calls), sortInitial(recorded)
	for i := 0; i < max(len(got), len(want)); i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("handler call %d: the replay's is %s, the recording's %s (%d calls replayed, %d recorded)", i+1, g, w, len(got), len(want))
		}
	}
	return ""
}

func sortInitial(calls []string) []string {
	out := slices.Clone(calls)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasSuffix(out[j], initialListMark) {
			j++
		}
		if j > i {
			slices.Sort(out[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}

// replayHeader is the header's word on the replay.
func replayHeader(rp *Replay) string {
	hd := rp.Session.Header
	lines := fmt.Sprintf("%d lines", rp.Session.Len())
	if rp.Session.Cut > 0 {
		lines += fmt.Sprintf(", and line %d cut short and left out", rp.Session.Cut)
	}
	return fmt.Sprintf("%s: recorded from %s%s (%s; objects: %s)", rp.Session.File, orUnknown(hd.Server, "a server it does not name"),
		prefixed(" at ", hd.Began), lines, orUnknown(hd.Objects, "as written"))
}

func orUnknown(s, unknown string) string {
	if s == "" {
		return unknown
	}
	return s
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
