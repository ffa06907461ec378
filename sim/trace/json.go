package trace

import (
	_ "embed"
	"encoding/json"
	"io"
	"time"
)

// Schema is the version of --output json's records (SCHEMA.md). It
// changes when a field changes meaning or goes away, or when a stream
// stops keeping a promise SCHEMA.md makes about it; new fields may
// appear without it.
//
// Version 2 added the error and summary records: a stream now always
// ends with a summary, and one that fails before its run starts (a
// scenario file that does not parse) opens with an error record instead
// of the header. A reader of version 1 could take the header as the
// first record and the last step record as the end; neither holds now.
const Schema = 2

// JSONSchema is the JSON Schema (draft 2020-12) every record validates
// against: schema.json, beside this file.
//
//go:embed schema.json
var JSONSchema []byte

// The records of --output json, one a line, each named by its "record"
// field. Their fields are in a fixed order.
//
//	{"record":"header","schema":2,"header":{...}}
//	{"record":"event","step":4,"impl":"cachelab","layer":"handler/h1","kind":"call","key":"ns0/a",...,"text":"OnUpdate ns0/a@2 -> ns0/a@4"}
//	{"record":"step","step":4,"pos":"sim/scenarios/x.txt:31","cmd":"update ns0/a","agree":true}
//	{"record":"error","schema":2,"kind":"run","step":5,"pos":"x.txt:40","cmd":"restart-etcd","message":"..."}
//	{"record":"summary","schema":2,"scenario":"x","verdict":"error","exit":3,"stepsRun":4,"stepsTotal":7,...}
type (
	headerRecord struct {
		Record string  `json:"record"` // "header"
		Schema int     `json:"schema"`
		Header *Header `json:"header"`
	}
	// An event record carries the event's typed fields (Event) and its
	// text rendering; impl is World, Cachelab or ClientGo.
	eventRecord struct {
		Record string `json:"record"` // "event"
		Step   int    `json:"step"`
		Impl   string `json:"impl"`
		*Event
		Text string `json:"text,omitempty"`
	}
	stepRecord struct {
		Record string `json:"record"` // "step"
		Step   int    `json:"step"`
		Pos    string `json:"pos"`
		Cmd    string `json:"cmd"`
		Agree  bool   `json:"agree"`
		// Diverged is the layer that differed, Diff the difference.
		Diverged string `json:"diverged,omitempty"`
		Diff     string `json:"diff,omitempty"`
		// TookMs, on a cluster, is the step's wall time (StepResult.Took).
		TookMs float64 `json:"tookMs,omitempty"`
	}
	errorRecord struct {
		Record string `json:"record"` // "error"
		Schema int    `json:"schema"`
		Failure
	}
	summaryRecord struct {
		Record string `json:"record"` // "summary"
		Schema int    `json:"schema"`
		Summary
	}
)

// Failure is why a run failed: the error record, the last but one of a
// failed run's stream. Message is what stderr says too.
type Failure struct {
	Kind FailureKind `json:"kind"`
	// Step is the step it happened at (1-based), 0 if none had begun.
	Step int `json:"step,omitempty"`
	// Pos is file:line: of the step, or of the line a scenario file
	// could not be parsed at.
	Pos string `json:"pos,omitempty"`
	Cmd string `json:"cmd,omitempty"`
	// Layer is the layer that differed, for a divergence.
	Layer   string `json:"layer,omitempty"`
	Message string `json:"message"`
}

// FailureKind says what went wrong. The set is closed.
type FailureKind string

const (
	FailUsage       FailureKind = "usage"       // bad input other than the file's text: a flag, an unknown scenario, a file that is not a regular file, a step the run's options cannot carry out (exit 2)
	FailParse       FailureKind = "parse"       // a scenario file that cannot be read: Pos is its file:line (exit 2)
	FailRun         FailureKind = "run"         // the run could not go on: etcd, a step that failed, a settle timeout (exit 3)
	FailDivergence  FailureKind = "divergence"  // client-go differed from cachelab (exit 1)
	FailUnexpected  FailureKind = "unexpected"  // a step printed something other than its file expects (exit 1)
	FailInterrupted FailureKind = "interrupted" // a signal stopped the run (exit 128+n)
	FailInternal    FailureKind = "internal"    // a bug in cachelab (exit 3)
)

// Verdict is how a run went, in one word. The set is closed.
type Verdict string

const (
	VerdictAgreed      Verdict = "agreed"      // every step ran and client-go agreed at each (exit 0)
	VerdictStopped     Verdict = "stopped"     // the user stopped at a --step pause; client-go agreed so far (exit 0)
	VerdictDiverged    Verdict = "diverged"    // client-go differed (exit 1)
	VerdictUnexpected  Verdict = "unexpected"  // a step printed something other than its file expects (exit 1)
	VerdictError       Verdict = "error"       // bad input, or the run could not go on (exit 2 or 3)
	VerdictInterrupted Verdict = "interrupted" // a signal stopped the run (exit 128+n)
)

// Summary is the last record of every stream.
type Summary struct {
	// Scenario is the scenario's name, or what was asked for when it
	// could not be loaded.
	Scenario string  `json:"scenario"`
	Verdict  Verdict `json:"verdict"`
	// Exit is the process's exit status.
	Exit int `json:"exit"`
	// StepsRun is how many steps have a step record above (JSONWriter
	// counts them); StepsTotal how many the scenario has (0 if it could
	// not be loaded).
	StepsRun   int `json:"stepsRun"`
	StepsTotal int `json:"stepsTotal"`
	// Clock is how far the scenario's fake clock moved, as the trace's
	// "clock +30s (now 1m30s)" lines write it, and ClockMs the same in
	// milliseconds; both absent when no run started.
	Clock   string `json:"clock,omitempty"`
	ClockMs *int64 `json:"clockMs,omitempty"`
	// Events counts the events of the steps run, per implementation
	// (World, Cachelab, ClientGo) and per layer, whichever --impl
	// printed: both implementations always run (JSONWriter counts them).
	Events map[string]map[string]int `json:"events"`
	// WallTimeMs is how long the run took in real time, in milliseconds:
	// the one field that differs from run to run. Leave it out of
	// anything compared.
	WallTimeMs int64 `json:"wallTimeMs"`
}

// SetClock sets Clock and ClockMs to d, how far the scenario's clock
// moved.
func (s *Summary) SetClock(d time.Duration) {
	ms := d.Milliseconds()
	s.Clock, s.ClockMs = d.String(), &ms
}

// JSONWriter writes a run as JSON lines: a header, each step's events
// and verdict, and at the end an error record if the run failed, then a
// summary. It counts what the summary reports as it goes.
type JSONWriter struct {
	enc *json.Encoder
	// impl is whose events to write: Cachelab, ClientGo or "both"
	// (both always, for a step where they diverged).
	impl   string
	steps  int
	events map[string]map[string]int
}

// NewJSONWriter returns a writer of JSON lines to w; impl is whose events
// to write (Cachelab, ClientGo or "both"), as --impl says.
func NewJSONWriter(w io.Writer, impl string) *JSONWriter {
	enc := json.NewEncoder(escapedJSON{w}) // no C1 or bidirectional control as it is: escapedJSON
	enc.SetEscapeHTML(false)               // "<", ">" and "&" as they are: traces are full of "->"
	return &JSONWriter{enc: enc, impl: impl, events: map[string]map[string]int{}}
}

// Header writes the header record.
func (j *JSONWriter) Header(h Header) error {
	if h.IDs == nil { // a scenario that names none: an empty list, not null
		h.IDs = []string{}
	}
	return j.enc.Encode(headerRecord{Record: "header", Schema: Schema, Header: &h})
}

// Step writes a step's records: every event of the world and of the
// chosen implementations (both when they diverged), then the verdict.
func (j *JSONWriter) Step(sr StepResult) error {
	j.steps++
	j.count(World, sr.World)
	for _, who := range []string{Cachelab, ClientGo} {
		j.count(who, sr.Sides[who])
	}
	if err := j.emit(sr.Index, World, sr.World); err != nil {
		return err
	}
	for _, who := range []string{Cachelab, ClientGo} {
		if j.impl == who || j.impl == "both" || sr.Divergence != nil {
			if err := j.emit(sr.Index, who, sr.Sides[who]); err != nil {
				return err
			}
		}
	}
	v := stepRecord{Record: "step", Step: sr.Index, Pos: sr.Pos, Cmd: sr.Cmd, Agree: sr.Divergence == nil,
		TookMs: float64(sr.Took.Microseconds()) / 1000}
	if sr.Divergence != nil {
		v.Diverged, v.Diff = sr.Divergence.Layer, sr.Divergence.Diff
	}
	return j.enc.Encode(v)
}

func (j *JSONWriter) count(who string, events []Event) {
	for _, e := range events {
		if j.events[who] == nil {
			j.events[who] = map[string]int{}
		}
		j.events[who][e.Layer]++
	}
}

func (j *JSONWriter) emit(step int, who string, events []Event) error {
	for i := range events {
		e := events[i]
		if err := j.enc.Encode(eventRecord{Record: "event", Step: step, Impl: who, Event: &e, Text: e.Text()}); err != nil {
			return err
		}
	}
	return nil
}

// Late writes the verdict on the calls that came after the last step (a
// late divergence) as a step record numbered one past the last, which
// disagrees. It is not a step run: the summary does not count it.
func (j *JSONWriter) Late(d *Divergence) error {
	return j.enc.Encode(stepRecord{Record: "step", Step: d.Step, Pos: d.Pos, Cmd: d.Cmd, Diverged: d.Layer, Diff: d.Diff})
}

// Error writes a failed run's error record, which comes just before the
// summary.
func (j *JSONWriter) Error(f Failure) error {
	return j.enc.Encode(errorRecord{Record: "error", Schema: Schema, Failure: f})
}

// Summary writes the last record, with the steps and events counted
// here in place of s's.
func (j *JSONWriter) Summary(s Summary) error {
	s.StepsRun, s.Events = j.steps, j.events
	return j.enc.Encode(summaryRecord{Record: "summary", Schema: Schema, Summary: s})
}
