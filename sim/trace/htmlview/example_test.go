package htmlview_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/htmlview"
)

// A run of one step, drawn: one file, whose only scripts are the run's
// events as JSON and its own drawing code (chips.js, then view.js).
func ExampleWrite() {
	write := trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Op: "create", Key: "ns0/a", UID: "uid-1", RV: "2", Detail: "create ns0/a@2"}
	run := htmlview.Run{
		Header: trace.Header{Scenario: "tiny", Title: "One create", IDs: []string{}},
		Steps:  []trace.StepResult{{Index: 1, Pos: "tiny.txt:2", Cmd: "create ns0/a", World: []trace.Event{write}}},
	}
	var page bytes.Buffer
	if err := htmlview.Write(&page, run); err != nil {
		panic(err)
	}
	for _, line := range strings.Split(page.String(), "\n") {
		if strings.HasPrefix(line, "<title>") || strings.HasPrefix(line, "<script") {
			fmt.Println(line[:min(len(line), 90)])
		}
	}
	// Output:
	// <title>cachelab · tiny: One create</title>
	// <script type="application/json" id="run">{"header":{"scenario":"tiny","title":"One create"
	// <script>// chips.js words and marks the timeline's chips (view.js draws them): the
}
