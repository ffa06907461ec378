// Package mermaiddraw has Mermaid itself draw diagrams in headless
// Chromium, for tests: the diagrams cachelab writes are checked by its own
// validator (sim/trace/mermaid.Validate) against the subset of Mermaid it
// writes, and here by the renderer GitHub runs.
//
// Mermaid's script comes from the npm registry:
//
//	npm install --prefix /tmp/mermaid mermaid@11
//	export CACHELAB_MERMAID_JS=/tmp/mermaid/node_modules/mermaid/dist/mermaid.min.js
//
// Without CACHELAB_MERMAID_JS a test that needs it skips, saying so,
// unless CACHELAB_REQUIRE_MERMAID=1 (.ci/run installs Mermaid and sets
// both), when it fails. Chromium is internal/browsertest's.
package mermaiddraw

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/browsertest"
)

// Script is the path of Mermaid's script, or the test skips (fails when
// CACHELAB_REQUIRE_MERMAID=1) without one.
func Script(t *testing.T) string {
	t.Helper()
	js := os.Getenv("CACHELAB_MERMAID_JS")
	if js == "" {
		const advice = "CACHELAB_MERMAID_JS is not set: to have Mermaid draw the diagrams, npm install --prefix /tmp/mermaid mermaid@11 and set it to /tmp/mermaid/node_modules/mermaid/dist/mermaid.min.js"
		if os.Getenv("CACHELAB_REQUIRE_MERMAID") == "1" {
			t.Fatal(advice + " (CACHELAB_REQUIRE_MERMAID=1 makes it required)")
		}
		t.Skip(advice)
	}
	js, err := filepath.Abs(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(js); err != nil {
		t.Fatalf("CACHELAB_MERMAID_JS: %v", err)
	}
	return js
}

// A Diagram is one to draw: where it is shown, and its text.
type Diagram struct{ Where, Text string }

// Problems has Mermaid (the script at js) draw each diagram in the
// browser ctx (browsertest.Start), with GitHub's limits (maxTextSize
// 50,000, maxEdges 500), and returns what went wrong: each diagram it
// cannot draw, with Mermaid's error, and each note whose words lie outside
// the drawing (cut off at its edge), each named by where the diagram is
// shown. A test fails (t.Fatal) only if the drawing itself could not run.
func Problems(t *testing.T, ctx context.Context, js string, diagrams []Diagram) []string {
	t.Helper()
	texts := make([]string, len(diagrams))
	for i, d := range diagrams {
		texts[i] = d.Text
	}
	data, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "draw.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<div id="out"></div>
<script>window.cachelabView = {ready: false, errors: [], results: []};
window.addEventListener("error", function (e) { cachelabView.errors.push(String(e.message)); });</script>
<script src="file://`+html.EscapeString(js)+`"></script>
<script type="application/json" id="diagrams">`+strings.ReplaceAll(string(data), "</", `<\/`)+`</script>
<script>`+drawJS+`</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, ctx, page)
	p.NoErrors(t)
	var results []struct {
		Error   string
		Outside []string
	}
	if err := json.Unmarshal([]byte(p.EvalString(t, "JSON.stringify(cachelabView.results)")), &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(diagrams) {
		t.Fatalf("Mermaid drew %d of %d diagrams", len(results), len(diagrams))
	}
	var problems []string
	for i, r := range results {
		if r.Error != "" {
			problems = append(problems, fmt.Sprintf("%s: Mermaid could not draw it: %s", diagrams[i].Where, r.Error))
		}
		for _, o := range r.Outside {
			problems = append(problems, fmt.Sprintf("%s: a note lies outside the drawing: %s", diagrams[i].Where, o))
		}
	}
	p.Close()
	return problems
}

// drawJS draws each diagram, puts it in the page so that its parts can be
// measured, checks that every note (its box and its words) lies inside the
// drawing's viewBox, and takes it out again.
const drawJS = `
(async function () {
  var v = window.cachelabView;
  try {
    mermaid.initialize({startOnLoad: false, securityLevel: "strict", maxTextSize: 50000, maxEdges: 500});
    var list = JSON.parse(document.getElementById("diagrams").textContent);
    for (var i = 0; i < list.length; i++) {
      var r = {error: "", outside: []};
      try {
        var out = await mermaid.render("d" + i, list[i]);
        var holder = document.createElement("div");
        holder.innerHTML = out.svg;
        document.getElementById("out").appendChild(holder);
        var svg = holder.querySelector("svg"), vb = svg.viewBox.baseVal;
        svg.querySelectorAll("text.noteText, rect.note").forEach(function (n) {
          var b = n.getBBox();
          if (b.x < vb.x - 1 || b.x + b.width > vb.x + vb.width + 1) {
            r.outside.push((n.textContent || n.getAttribute("class")).slice(0, 80) + " (x " + Math.round(b.x) + " to " +
              Math.round(b.x + b.width) + ", the drawing " + Math.round(vb.x) + " to " + Math.round(vb.x + vb.width) + ")");
          }
        });
        holder.remove();
      } catch (e) {
        r.error = String(e && e.message || e);
      }
      v.results.push(r);
    }
  } catch (e) {
    v.errors.push(String(e && e.stack || e));
  }
  v.ready = true;
})();
`
