// Package schemacheck checks what `cachelab run --output json` writes
// against what sim/trace documents of it, for tests: each record against
// the JSON Schema (sim/trace/schema.json, trace.JSONSchema), and a whole
// stream against the promises SCHEMA.md makes about it (a header or an
// error first, one summary last, an error record just before it exactly
// when the run failed, step records numbered 1, 2, ... after their
// events).
//
// It wraps github.com/santhosh-tekuri/jsonschema/v6, which implements
// draft 2020-12 and passes the JSON-Schema-Test-Suite. The schema is
// compiled once.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cachelab/cachelab/sim/trace"
)

// schemaURL names the schema as its "$id" does.
const schemaURL = "https://github.com/cachelab/cachelab/sim/trace/schema.json"

// compiled holds the whole schema ("") and each record's definition
// (by name), so that a record is checked against its own definition and
// an error speaks of it alone, not of every branch of the schema's oneOf.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(trace.JSONSchema))
	if err != nil {
		return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range []string{"", "header", "event", "step", "error", "summary"} {
		loc := schemaURL
		if name != "" {
			loc += "#/$defs/" + name
		}
		if out[name], err = c.Compile(loc); err != nil {
			return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
		}
	}
	return out, nil
})

// Record checks one line of the stream against the schema.
func Record(line []byte) error {
	schemas, err := compiled()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var r struct{ Record string }
	_ = json.Unmarshal(line, &r) // a line that is not an object fails the whole schema
	err = schemas[""].Validate(inst)
	if def, ok := schemas[r.Record]; err != nil && ok && r.Record != "" {
		if defErr := def.Validate(inst); defErr != nil {
			return defErr // the same verdict, said of the record's own definition
		}
	}
	return err
}

// record is what Stream reads of each record to check their order.
type record struct {
	Record   string
	Step     int
	Cmd      string
	Agree    bool
	Impl     string
	Layer    string
	Verdict  trace.Verdict
	StepsRun int
	Events   map[string]map[string]int
}

// Stream checks a whole stream: every line against the schema, and the
// records' order. It names the first line that breaks a rule.
func Stream(out []byte) error {
	text := strings.TrimSuffix(string(out), "\n")
	if text == "" {
		return fmt.Errorf("no records: a stream ends with a summary record")
	}
	var recs []record
	for i, line := range strings.Split(text, "\n") {
		if err := Record([]byte(line)); err != nil {
			return fmt.Errorf("line %d does not match the schema: %v\n%s", i+1, err, line)
		}
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fmt.Errorf("line %d: %v", i+1, err)
		}
		recs = append(recs, r)
	}
	if err := checkOrder(recs); err != nil {
		return err
	}
	return checkCounts(recs)
}

// checkOrder checks the stream's shape: header or error first; then
// steps, each its events then its step record, numbered 1, 2, ...; a
// late divergence's step record; the error record, exactly when the
// verdict says the run failed; the summary.
func checkOrder(recs []record) error {
	last := recs[len(recs)-1]
	if last.Record != "summary" {
		return fmt.Errorf("line %d is a %s record; the last must be the summary", len(recs), last.Record)
	}
	body := recs[:len(recs)-1]
	failed := last.Verdict != trace.VerdictAgreed && last.Verdict != trace.VerdictStopped
	if n := len(body); failed != (n > 0 && body[n-1].Record == "error") {
		return fmt.Errorf("verdict %q: a failed run, and only a failed run, has an error record just before the summary", last.Verdict)
	}
	if failed {
		body = body[:len(body)-1]
	}
	if len(body) > 0 && body[0].Record != "header" {
		return fmt.Errorf("line 1 is a %s record; a run that started opens with its header", body[0].Record)
	}
	steps := 0
	for i, r := range body[min(1, len(body)):] {
		line := i + 2
		switch {
		case r.Record == "event" && r.Step != steps+1:
			return fmt.Errorf("line %d: an event of step %d among step %d's", line, r.Step, steps+1)
		case r.Record == "step" && r.Step != steps+1:
			return fmt.Errorf("line %d: step record %d after step %d's", line, r.Step, steps)
		case r.Record == "step" && r.Cmd == "(after the last step)":
			if r.Agree || i != len(body)-2 {
				return fmt.Errorf("line %d: the late calls' verdict is a divergence, last before the error record", line)
			}
		case r.Record == "step":
			steps++
		case r.Record != "event":
			return fmt.Errorf("line %d: a %s record among the steps", line, r.Record)
		}
	}
	if last.StepsRun != steps {
		return fmt.Errorf("the summary says %d steps ran; the stream has %d step records", last.StepsRun, steps)
	}
	return nil
}

// checkCounts checks the summary's event counts against the event
// records: the world's are all written, each implementation's only as
// --impl says (both always run).
func checkCounts(recs []record) error {
	seen := map[string]map[string]int{}
	for _, r := range recs {
		if r.Record == "event" {
			if seen[r.Impl] == nil {
				seen[r.Impl] = map[string]int{}
			}
			seen[r.Impl][r.Layer]++
		}
	}
	sum := recs[len(recs)-1].Events
	for impl, layers := range seen {
		for layer, n := range layers {
			if got := sum[impl][layer]; got < n || impl == trace.World && got != n {
				return fmt.Errorf("the summary counts %d %s events in layer %s; the stream has %d", got, impl, layer, n)
			}
		}
	}
	for layer, n := range sum[trace.World] {
		if seen[trace.World][layer] != n {
			return fmt.Errorf("the summary counts %d world events in layer %s; the stream has %d", n, layer, seen[trace.World][layer])
		}
	}
	return nil
}

// documents holds the other schemas Document has compiled, by $id.
var documents sync.Map // string -> *jsonschema.Schema

// Document checks one JSON document against a schema of its own (such
// as explore.Schema, which this package cannot import: sim's tests
// import this package), compiled once per $id.
func Document(schema []byte, doc []byte) error {
	var head struct {
		ID string `json:"$id"`
	}
	if err := json.Unmarshal(schema, &head); err != nil || head.ID == "" {
		return fmt.Errorf("schemacheck: the schema has no $id (%v)", err)
	}
	s, ok := documents.Load(head.ID)
	if !ok {
		sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			return fmt.Errorf("schemacheck: %s: %w", head.ID, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(head.ID, sdoc); err != nil {
			return fmt.Errorf("schemacheck: %s: %w", head.ID, err)
		}
		compiled, err := c.Compile(head.ID)
		if err != nil {
			return fmt.Errorf("schemacheck: %s: %w", head.ID, err)
		}
		s, _ = documents.LoadOrStore(head.ID, compiled)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.(*jsonschema.Schema).Validate(inst)
}
