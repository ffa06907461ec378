// Package browsertest opens cachelab's pages in headless Chromium for
// tests, as a new user would open them, and reads what they drew. It
// waits on the browser only through the DevTools protocol (chromedp),
// each wait within the test binary's deadline (package testdeadline):
// no sleeps, and no seconds of its own.
//
// Chromium is Debian's chromium package. Without it a test skips, saying
// how to install it, unless CACHELAB_REQUIRE_BROWSER=1 (.ci/run sets it
// after installing Chromium), when it fails.
//
// A page says it has drawn by setting window.cachelabView.ready, and
// counts its draws in window.cachelabView.draws; its script errors are in
// window.cachelabView.errors.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// Start starts headless Chromium for the test, with a window of
// 1600x1000 and scrollbars shown, or skips (fails when CACHELAB_REQUIRE_BROWSER=1) if there is
// none. The browser ends with the test.
func Start(t testing.TB) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		const advice = "no chromium or chromium-browser on PATH: install Chromium to run the browser test (Debian, Ubuntu: apt-get install chromium)"
		if os.Getenv("CACHELAB_REQUIRE_BROWSER") == "1" {
			t.Fatal(advice + "; CACHELAB_REQUIRE_BROWSER=1 makes it required")
		}
		t.Skip(advice)
	}
	// The test binary's deadline (go test -timeout), not seconds of its
	// own: a fixed 90 s for the whole test ran out on a loaded CI runner
	// while the page it waited on was still drawing.
	ctx := testdeadline.Context(t)
	// Scrollbars take their room as on a desktop's Chromium: headless
	// hides them (chromedp.Headless), and a page laid out to the whole
	// window's width then overflows by a scrollbar's width on the user's
	// screen, which no test would see (issue 47).
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(path), chromedp.Headless, chromedp.Flag("hide-scrollbars", false),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1600, 1000), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck)
	t.Cleanup(cancelAlloc)
	return ctx
}

// Tab is a page open in its own tab, with what its console said.
type Tab struct {
	Ctx     context.Context
	close   context.CancelFunc
	mu      sync.Mutex
	console []string
}

// Close closes the tab (it is closed with the test otherwise): a test that
// opens many pages closes each when done with it.
func (p *Tab) Close() { p.close() }

// Open opens file in a new tab and waits until the page says it has
// drawn (window.cachelabView.ready).
func Open(t testing.TB, parent context.Context, file string) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent)
	t.Cleanup(cancel)
	p := &Tab{Ctx: ctx, close: cancel}
	if err := chromedp.Do(ctx); err != nil { // start the tab, so the console is heard from the first line
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				p.mu.Lock()
				p.console = append(p.console, m.String())
				p.mu.Unlock()
			}
		}
	}()
	p.Go(t, file)
	return p
}

// Go opens file in the tab, in place of the page it showed, and waits
// until the page says it has drawn.
func (p *Tab) Go(t testing.TB, file string) {
	t.Helper()
	p.Do(t, chromedp.Navigate("file://"+file))
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[bool]("window.cachelabView && window.cachelabView.ready", poll)); err != nil {
		t.Fatalf("%s: the page did not say it had drawn: %v", file, err)
	}
}

// Do carries out actions in the tab.
func (p *Tab) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(p.Ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Eval is the number a script gives.
func (p *Tab) Eval(t testing.TB, js string) float64 {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// EvalString is the string a script gives.
func (p *Tab) EvalString(t testing.TB, js string) string {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// Text is the text of the first element sel selects.
func (p *Tab) Text(t testing.TB, sel string) string {
	t.Helper()
	return p.EvalString(t, fmt.Sprintf("document.querySelector(%q).textContent", sel))
}

// N is the number of elements sel selects.
func (p *Tab) N(t testing.TB, sel string) float64 {
	t.Helper()
	return p.Eval(t, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

// Count checks that sel selects want elements.
func (p *Tab) Count(t testing.TB, sel string, want float64) {
	t.Helper()
	if got := p.N(t, sel); got != want {
		t.Errorf("%s: %v elements, want %v", sel, got, want)
	}
}

// AtLeast checks that sel selects at least want elements.
func (p *Tab) AtLeast(t testing.TB, sel string, want float64) {
	t.Helper()
	if got := p.N(t, sel); got < want {
		t.Errorf("%s: %v elements, want at least %v", sel, got, want)
	}
}

// Screenshot is a PNG of what the tab shows.
func (p *Tab) Screenshot(t testing.TB) []byte {
	t.Helper()
	b, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Resize gives the page a window of w x h and waits until it has drawn
// again for it (cachelabView.draws goes up).
func (p *Tab) Resize(t testing.TB, w, h int64) {
	t.Helper()
	before := p.Eval(t, "cachelabView.draws")
	p.Do(t, chromedp.EmulateViewport(w, h))
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[bool](fmt.Sprintf("cachelabView.draws > %v", before), poll)); err != nil {
		t.Fatalf("the page did not draw again after a resize to %dx%d: %v", w, h, err)
	}
}

// NoErrors checks that no script failed: nothing on the console at level
// error, no uncaught exception, and none the page's window.onerror caught.
func (p *Tab) NoErrors(t testing.TB) {
	t.Helper()
	if n := p.Eval(t, "cachelabView.errors.length"); n != 0 {
		t.Errorf("the page caught %v script errors:\n%s", n, p.EvalString(t, `cachelabView.errors.join("\n")`))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.console {
		t.Errorf("console: %s", m)
	}
}

// NotBlank checks that a screenshot shows something: a PNG with dark
// pixels (text) and some colour (chips, bands) on the white page.
func NotBlank(t testing.TB, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	dark, colour, total := 0, 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			total++
			r, g, bl := rgb(img, x, y)
			if r+g+bl < 3*100 {
				dark++
			}
			if max(r, g, bl)-min(r, g, bl) > 40 {
				colour++
			}
		}
	}
	if dark*200 < total || colour*200 < total {
		t.Errorf("the screenshot looks blank: %d of %d pixels dark, %d coloured", dark, total, colour)
	}
}

func rgb(img image.Image, x, y int) (int, int, int) {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}

// poll checks a page's condition on a timer: the default, on every
// animation frame, can wait seconds in a headless tab that paints
// nothing new.
var poll = chromedp.WithPollingInterval(10 * time.Millisecond)

// CheckFits checks that a run's timeline page (sim/trace/htmlview) shows
// the whole run in its window: every step's column ends inside the
// timeline's view, and the timeline does not scroll sideways. what names
// the page in a failure.
func (p *Tab) CheckFits(t testing.TB, what string) {
	t.Helper()
	tl := `document.getElementById("timeline")`
	if out := p.EvalString(t, `[...document.querySelectorAll(".step")].filter(s => s.getBoundingClientRect().right > `+tl+
		`.getBoundingClientRect().left + `+tl+`.clientWidth + 1).map(s => s.textContent).join(", ")`); out != "" {
		t.Errorf("%s: steps out of view: %s", what, out)
	}
	if over := p.Eval(t, tl+`.scrollWidth - `+tl+`.clientWidth`); over > 1 {
		t.Errorf("%s: the timeline scrolls %v px sideways", what, over)
	}
}
