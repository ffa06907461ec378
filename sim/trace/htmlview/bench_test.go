package htmlview

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cachelab/cachelab/internal/browsertest"
)

// The page of a 10,000-object run: what --output html adds to a run's
// cost.
//
//	go test ./sim/trace/htmlview -run XXX -bench Write -benchmem
func BenchmarkWrite(b *testing.B) {
	r := bulkRun(10000)
	for b.Loop() {
		if err := Write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// The 10,000-object page opened in headless Chromium, each time in a new
// tab: from navigation until the page says it has drawn. It reports the
// page's own measure too (render-ms, from navigation to drawn). It skips
// without Chromium.
//
//	go test ./sim/trace/htmlview -run XXX -bench Open -benchtime 5x
func BenchmarkOpen(b *testing.B) {
	ctx := browsertest.Start(b)
	bulk, _ := bulkPage()
	file := filepath.Join(b.TempDir(), "bulk.html")
	if err := os.WriteFile(file, bulk, 0o644); err != nil {
		b.Fatal(err)
	}
	var renderMs float64
	for b.Loop() {
		p := browsertest.Open(b, ctx, file)
		renderMs += p.Eval(b, "cachelabView.renderMs")
		p.Close()
	}
	b.ReportMetric(renderMs/float64(b.N), "render-ms/op")
}
