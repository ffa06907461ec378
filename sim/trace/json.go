package trace

import (
	"encoding/json"
	"io"
)

// Schema is the version of --output json's records. It changes when a
// field changes meaning or goes away; new fields may appear without it.
const Schema = 1

// record is one line of --output json: a header, then for each step its
// events and its verdict.
//
//	{"record":"header","schema":1,"header":{...}}
//	{"record":"event","step":4,"impl":"cachelab","layer":"handler/h1","kind":"call","key":"ns0/a",...,"text":"OnUpdate ns0/a@2 -> ns0/a@4"}
//	{"record":"step","step":4,"pos":"sim/scenarios/x.txt:31","cmd":"update ns0/a","agree":true}
//
// An event record carries the event's typed fields (Event) and its text
// rendering; impl is "world", "cachelab" or "client-go".
type record struct {
	Record string  `json:"record"` // "header", "event", "step"
	Schema int     `json:"schema,omitempty"`
	Header *Header `json:"header,omitempty"`
	Step   int     `json:"step,omitempty"`
	Pos    string  `json:"pos,omitempty"`
	Cmd    string  `json:"cmd,omitempty"`
	Impl   string  `json:"impl,omitempty"`
	*Event
	Text  string `json:"text,omitempty"`
	Agree *bool  `json:"agree,omitempty"`
	// Diverged is the layer that differed, for a step record.
	Diverged string `json:"diverged,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

// WriteJSONHeader writes the header record.
func WriteJSONHeader(w io.Writer, h Header) error {
	return newJSONEncoder(w).Encode(record{Record: "header", Schema: Schema, Header: &h})
}

// WriteJSONStep writes a step's records: every event of the world and of
// the chosen implementations (impl: Cachelab, ClientGo or "both"; both
// when they diverged), then the verdict.
func WriteJSONStep(w io.Writer, sr StepResult, impl string) error {
	enc := newJSONEncoder(w)
	emit := func(who string, events []Event) error {
		for i := range events {
			e := events[i]
			if err := enc.Encode(record{Record: "event", Step: sr.Index, Impl: who, Event: &e, Text: e.Text()}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := emit(World, sr.World); err != nil {
		return err
	}
	for _, who := range []string{Cachelab, ClientGo} {
		if impl == who || impl == "both" || sr.Divergence != nil {
			if err := emit(who, sr.Sides[who]); err != nil {
				return err
			}
		}
	}
	agree := sr.Divergence == nil
	v := record{Record: "step", Step: sr.Index, Pos: sr.Pos, Cmd: sr.Cmd, Agree: &agree}
	if sr.Divergence != nil {
		v.Diverged, v.Diff = sr.Divergence.Layer, sr.Divergence.Diff
	}
	return enc.Encode(v)
}

// WriteJSONFinish writes the verdict on the calls that came after the
// last step (a late divergence) as a step record numbered one past the
// last, which disagrees.
func WriteJSONFinish(w io.Writer, d *Divergence) error {
	agree := false
	return newJSONEncoder(w).Encode(record{Record: "step", Step: d.Step, Pos: d.Pos, Cmd: d.Cmd, Agree: &agree, Diverged: d.Layer, Diff: d.Diff})
}

// newJSONEncoder writes one record per line, with "<", ">" and "&" as they
// are (traces are full of "->").
func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
