package exploring_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// exploration explores the scenario name (built in, or a file) with o, each
// run seeded 1 as the CLI's are, up to 32 placements at once: a run mostly
// waits (on settling, and on client-go's relist backoff, which waits
// real time), so many at once cost little more than one. A cell that
// asks for an exploration a cell before it made reads its record.
func exploration(name string, o explore.Options) explore.Record {
	key := fmt.Sprintf("%s %+v", name, o)
	mu.Lock()
	rec, ok := records[key]
	mu.Unlock()
	if ok {
		return rec
	}
	sc, err := sim.Load(name)
	if err != nil {
		panic(err)
	}
	o.Run.Seed, o.Jobs = 1, 32
	ex, err := explore.Run(context.Background(), sc, o)
	if err != nil {
		panic(err)
	}
	rec = ex.Record()
	mu.Lock()
	records[key] = rec
	mu.Unlock()
	return rec
}

// records is each exploration made so far, by its scenario and
// options.
var (
	mu      sync.Mutex
	records = map[string]explore.Record{}
)

// report prints an exploration's record as `cachelab explore` prints it.
func report(rec explore.Record) { rec.WriteReport(os.Stdout, nil) }

// group is the record's group whose story starts with label.
func group(rec explore.Record, label string) explore.RecordGroup {
	for _, g := range rec.Groups() {
		if strings.HasPrefix(g.Label, label) {
			return g
		}
	}
	panic("no group " + label)
}

// replay runs a scenario file as `cachelab run FILE` does, and says for
// each step whether it printed what the file expects.
func replay(file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	sc, err := scenario.Parse(file, src)
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	for i, sr := range res.Steps {
		mark := "✓ as the file says"
		if trace.StepOutput(sr) != sc.Steps[i].Expected {
			mark = "✗ not what the file says"
		}
		fmt.Printf("step %d %-22s %s\n", i+1, sc.Steps[i].Text, mark)
	}
	if res.Divergence == nil {
		fmt.Println("client-go agreed at every step")
	}
}

// show prints the lines of a scenario file's expected output that come
// from the given layers (handler/h1 counts as handler), each step's
// command before its lines.
func show(file string, layers ...string) {
	for _, block := range strings.Split(file, "\n\n") {
		cmd, out, ok := strings.Cut(block, "\n----\n")
		if !ok {
			continue
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			layer, _, _ := strings.Cut(strings.Fields(l + " x")[0], "/")
			if slices.Contains(layers, layer) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			fmt.Printf("%s\n  %s\n", cmd, strings.Join(lines, "\n  "))
		}
	}
}
