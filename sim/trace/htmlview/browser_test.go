package htmlview

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// storyStep is a step of an object's story as view.js gives it.
type storyStep struct {
	Step                      int
	Cmd                       string
	World, Cachelab, ClientGo []string
}

var screenshot = flag.String("screenshot", "", "also write the browser test's screenshot of a run, its first object in focus, to this file (docs/timeline.png)")

// The browser test opens pages in headless Chromium, as a new user would
// open them, and checks what the page draws: its elements, that no script
// failed, a screenshot that is not blank, and that a click on an object
// highlights its journey. It waits on the browser only through the
// DevTools protocol, each wait within the test's deadline.
//
// Chromium is Debian's chromium package. Without it the test skips, saying
// how to install it, unless CACHELAB_REQUIRE_BROWSER=1 (.ci/run sets it
// after installing Chromium), when it fails.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()

	t.Run("a run", func(t *testing.T) {
		p := open(t, ctx, page(t, dir, "run.html", loadRun(t, "relist-after-compaction")))
		p.count(t, ".step", 9)
		p.count(t, ".fault", 2) // disconnected, compacted
		p.count(t, "#verdict.agree", 1)
		p.count(t, ".row.lane", 2+9+7) // etcd and sim; 9 of cachelab; client-go has no reflector nor pop lane
		p.atLeast(t, ".chip", 40)
		notBlank(t, p.screenshot(t))

		// A click on ns0/a's first watch event: its journey lights up in
		// every lane it crossed, joined by arrows, and the line shows.
		p.do(t, chromedp.Click(chromedp.CSS(`.impl-cachelab .chip.k-event[data-obj="0"]`)))
		p.atLeast(t, ".chip.on", 12)
		p.atLeast(t, ".chip.dim", 4)
		p.atLeast(t, "svg.arrows path.a-cachelab", 6)
		p.atLeast(t, "svg.arrows path.a-client-go", 6)
		if lanes := p.eval(t, `new Set([...document.querySelectorAll(".chip.on")].map(c => c.parentNode.dataset.lane)).size`); lanes < 8 {
			t.Errorf("the journey of ns0/a lights up %v lanes, want at least 8 (etcd, and watch, transform, indexer, handler on each side)", lanes)
		}
		if line := p.text(t, "#line"); !bytes.Contains([]byte(line), []byte("ADDED ns0/a@2")) {
			t.Errorf("the detail shows %q, want the whole trace line (w1 ADDED ns0/a@2)", line)
		}
		shot := p.screenshot(t)
		notBlank(t, shot)
		if *screenshot != "" {
			if err := os.WriteFile(*screenshot, shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// The layer filter drops lanes; the object filter keeps one object.
		p.do(t, chromedp.Click(chromedp.CSS(`#layers input`))) // etcd
		p.count(t, ".row.lane", 2+9+7-1)
		p.do(t, chromedp.Click(chromedp.CSS("#clear")), chromedp.SendKeys(chromedp.CSS("#object"), "ns0/c"))
		p.count(t, ".chip.on", p.eval(t, `document.querySelectorAll(".chip").length`))
		p.noErrors(t)
	})

	// Scrolled to the last step, the page still says which half is which:
	// the group names stay at the left edge (issue 29).
	t.Run("scrolled sideways", func(t *testing.T) {
		p := open(t, ctx, page(t, dir, "scrolled.html", loadRun(t, "relist-after-compaction")))
		// Narrower than nine of the narrowest columns: the run cannot fit.
		p.resize(t, 700, 800)
		tl := `document.getElementById("timeline")`
		if over := p.eval(t, tl+`.scrollWidth - `+tl+`.clientWidth`); over <= 0 {
			t.Fatalf("the timeline is not wider than its view (%v px over): the test scrolls nothing", over)
		}
		p.eval(t, tl+`.scrollLeft = `+tl+`.scrollWidth, 0`)
		p.count(t, ".group-name", 3) // the world, cachelab, client-go
		lefts := p.evalString(t, `[...document.querySelectorAll(".group-name")].map(g => g.textContent + "|" + Math.round(g.getBoundingClientRect().left)).join("\n")`)
		for _, g := range strings.Split(lefts, "\n") {
			name, at, _ := strings.Cut(g, "|")
			if x, err := strconv.Atoi(at); err != nil || x < 0 || x > 40 {
				t.Errorf("scrolled to the right, the group %q is at x=%s, want it at the left edge (0-40)", name, at)
			}
		}
		p.noErrors(t)
	})

	// At laptop width the whole run is in view: every step's column ends
	// inside the timeline's view, with no sideways scrolling (issue 29).
	t.Run("at 1280x800", func(t *testing.T) {
		for _, name := range []string{"relist-after-compaction", "reconcile-stale-cache"} {
			p := open(t, ctx, page(t, dir, "fit-"+name+".html", loadRun(t, name)))
			p.resize(t, 1280, 800)
			tl := `document.getElementById("timeline")`
			if out := p.evalString(t, `[...document.querySelectorAll(".step")].filter(s => s.getBoundingClientRect().right > `+tl+`.getBoundingClientRect().left + `+tl+`.clientWidth + 1).map(s => s.textContent).join(", ")`); out != "" {
				t.Errorf("%s at 1280x800: steps out of view: %s", name, out)
			}
			if over := p.eval(t, tl+`.scrollWidth - `+tl+`.clientWidth`); over > 1 {
				t.Errorf("%s at 1280x800: the timeline scrolls %v px sideways", name, over)
			}
			p.noErrors(t)
		}
	})

	// The page tells an object's story as the text trace's --object does
	// (trace.StoryOf): for every object of each recorded run, the same
	// steps and the same sentences on each side (issue 29).
	t.Run("stories", func(t *testing.T) {
		for _, name := range []string{"relist-after-compaction", "reconcile-stale-cache", "no-coalescing-realfifo"} {
			r := loadRun(t, name)
			p := open(t, ctx, page(t, dir, "stories-"+name+".html", r))
			queueWorld := slices.ContainsFunc(r.Steps, trace.QueueWorld)
			for _, key := range keys(r.Steps) {
				want := []storyStep{}
				for _, sr := range r.Steps {
					if st, ok := trace.StoryOf(sr, key, queueWorld); ok {
						want = append(want, storyStep{Step: st.Index, Cmd: st.Cmd, World: st.World, Cachelab: st.Cachelab, ClientGo: st.ClientGo})
					}
				}
				var got []storyStep
				if err := json.Unmarshal([]byte(p.evalString(t, fmt.Sprintf("JSON.stringify(cachelabView.story(%q))", key))), &got); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s: the page's story of %s differs from the text's (-text +page):\n%s", name, key, d)
				}
			}
			p.noErrors(t)
		}
	})

	// A learner picks ns0/a and reads what happened to it, step by step,
	// in the drawer under the timeline (issue 29).
	t.Run("a story", func(t *testing.T) {
		p := open(t, ctx, page(t, dir, "story.html", loadRun(t, "relist-after-compaction")))
		p.count(t, "#story:not([hidden])", 0) // two objects: none in focus until one is picked
		p.count(t, "svg.arrows", 0)
		p.do(t, chromedp.SendKeys(chromedp.CSS("#object"), "ns0/a"))
		p.count(t, "#story:not([hidden])", 1)
		if key := p.text(t, "#story-key"); key != "ns0/a" {
			t.Errorf("the story is of %q, want ns0/a", key)
		}
		rows := p.evalString(t, `[...document.querySelectorAll("#story-rows tr")].map(r => [...r.cells].map(c => c.innerText.replace(/\s+/g, " ").trim()).join(" | ")).join("\n")`)
		for _, want := range []string{
			"step 2 create ns0/a ns0/b | created in etcd at rv 2",
			"disconnected | updated in etcd, rv 2 → 4",
			"handler h1: OnUpdate ns0/a@2 -> ns0/a@4",
		} {
			if !strings.Contains(rows, want) {
				t.Errorf("the story has no %q; its rows:\n%s", want, rows)
			}
		}
		// Only the object in focus has arrows.
		p.atLeast(t, "svg.arrows path", 6)
		objs := p.evalString(t, `[...new Set([...document.querySelectorAll(".chip.on")].map(c => c.dataset.obj))].join(",")`)
		if objs != "0" {
			t.Errorf("chips in focus belong to objects %q, want only ns0/a (0)", objs)
		}
		p.do(t, chromedp.Click(chromedp.CSS("#close-story")))
		p.count(t, "#story:not([hidden])", 0)
		p.count(t, "svg.arrows", 0)
		p.noErrors(t)
	})

	// A reconcile's chip says how it went, without a click (issue 29).
	t.Run("a reconcile", func(t *testing.T) {
		p := open(t, ctx, page(t, dir, "reconcile.html", loadRun(t, "reconcile-stale-cache")))
		chips := p.evalString(t, `[...document.querySelectorAll(".chip")].map(c => c.textContent).join("\n")`)
		for _, want := range []string{"reconcile web → ok", "reconcile web → 409 conflict", "reconcile web → wrote @4 · ok · requeue 1s", "requeue web 5ms"} {
			if !strings.Contains(chips, want) {
				t.Errorf("no chip reads %q; the chips:\n%v", want, chips)
			}
		}
		p.noErrors(t)
	})

	t.Run("a divergence", func(t *testing.T) {
		p := open(t, ctx, page(t, dir, "diverged.html", diverging(t, loadRun(t, "relist-after-compaction"), 9)))
		p.count(t, "#verdict.diverged", 1)
		p.count(t, ".step.diverged", 1)
		p.count(t, ".cell.diverged", 2) // handler/h1 on each side
		p.noErrors(t)
	})

	t.Run("10,000 objects", func(t *testing.T) {
		bulk, _ := bulkPage()
		file := filepath.Join(dir, "bulk.html")
		if err := os.WriteFile(file, bulk, 0o644); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		p := open(t, ctx, file)
		opened := time.Since(began)
		t.Logf("10,000 objects: a page of %.1f MB opened and drawn in %v (the page's own clock: %.0f ms from navigation to drawn)",
			float64(len(bulk))/1e6, opened.Round(time.Millisecond), p.eval(t, "cachelabView.renderMs"))
		if limit := 10 * time.Second; opened > limit {
			t.Errorf("the page took %v to open, want under %v", opened, limit)
		}
		if n := p.eval(t, `document.getElementsByTagName("*").length`); n > 3000 {
			t.Errorf("the page has %v elements, want at most 3000: large cells should be counted bands", n)
		}
		p.atLeast(t, ".band", 8)
		p.do(t, chromedp.SendKeys(chromedp.CSS("#object"), "ns0/obj-04242"))
		p.atLeast(t, ".chip.on", 10)
		p.atLeast(t, "svg.arrows path", 8)
		p.noErrors(t)
	})
}

// resize gives the page a window of w x h and waits until it has drawn
// the timeline again for it (the page redraws 100 ms after a resize
// ends; the wait is on its draw count, through the DevTools protocol).
func (p *tab) resize(t *testing.T, w, h int64) {
	t.Helper()
	before := p.eval(t, "cachelabView.draws")
	p.do(t, chromedp.EmulateViewport(w, h))
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](fmt.Sprintf("cachelabView.draws > %v", before))); err != nil {
		t.Fatalf("the page did not draw again after a resize to %dx%d: %v", w, h, err)
	}
}

// browser starts headless Chromium for the test, or skips (fails when
// CACHELAB_REQUIRE_BROWSER=1) if there is none.
func browser(t *testing.T) context.Context {
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
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1600, 1000), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck)
	t.Cleanup(cancelAlloc)
	return ctx
}

// page writes r's page into dir and returns its path.
func page(t *testing.T, dir, name string, r Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// tab is a page open in its own tab, with what its console said.
type tab struct {
	ctx     context.Context
	mu      sync.Mutex
	console []string
}

// open opens file in a new tab and waits until the page says it has
// drawn (window.cachelabView.ready).
func open(t *testing.T, parent context.Context, file string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent)
	t.Cleanup(cancel)
	p := &tab{ctx: ctx}
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
	p.do(t, chromedp.Navigate("file://"+file))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("window.cachelabView && window.cachelabView.ready")); err != nil {
		t.Fatalf("%s: the page did not say it had drawn: %v", file, err)
	}
	return p
}

func (p *tab) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func (p *tab) eval(t *testing.T, js string) float64 {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (p *tab) text(t *testing.T, sel string) string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).textContent", sel)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (p *tab) n(t *testing.T, sel string) float64 {
	t.Helper()
	return p.eval(t, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

func (p *tab) count(t *testing.T, sel string, want float64) {
	t.Helper()
	if got := p.n(t, sel); got != want {
		t.Errorf("%s: %v elements, want %v", sel, got, want)
	}
}

func (p *tab) atLeast(t *testing.T, sel string, want float64) {
	t.Helper()
	if got := p.n(t, sel); got < want {
		t.Errorf("%s: %v elements, want at least %v", sel, got, want)
	}
}

func (p *tab) screenshot(t *testing.T) []byte {
	t.Helper()
	b, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noErrors checks that no script failed: nothing on the console at level
// error, no uncaught exception, and none the page's window.onerror caught.
func (p *tab) noErrors(t *testing.T) {
	t.Helper()
	if n := p.eval(t, "cachelabView.errors.length"); n != 0 {
		t.Errorf("the page caught %v script errors:\n%s", n, p.evalString(t, `cachelabView.errors.join("\n")`))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.console {
		t.Errorf("console: %s", m)
	}
}

func (p *tab) evalString(t *testing.T, js string) string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// notBlank checks that a screenshot shows something: a PNG with dark
// pixels (text) and some colour (chips, bands) on the white page.
func notBlank(t *testing.T, shot []byte) {
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
