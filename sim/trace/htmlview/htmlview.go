package htmlview

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

var (
	//go:embed assets/page.html.tmpl
	pageTemplate string
	//go:embed assets/view.css
	viewCSS string
	//go:embed assets/view.js
	viewJS string
	//go:embed assets/chips.js
	chipsJS string

	pageTmpl = template.Must(template.New("page").Parse(pageTemplate))
)

// Write writes the run as one self-contained HTML page: its CSS, its
// script and the run's events are inside it, and it loads nothing else.
// The same run always gives the same bytes.
//
// Its cost is linear in the run's events: about 20 bytes of page each
// (a run of 10,000 objects, 260,000 events, is a page of a few MB).
func Write(w io.Writer, r Run) error {
	data, err := json.Marshal(build(r))
	if err != nil {
		return fmt.Errorf("htmlview: %w", err)
	}
	// json.Marshal writes <, > and & as \u003c..., so the data cannot end
	// its <script> element early.
	var buf bytes.Buffer
	err = pageTmpl.Execute(&buf, struct {
		Title string
		CSS   template.CSS
		JS    template.JS
		Data  template.JS
	}{Title: title(r), CSS: template.CSS(viewCSS), JS: template.JS(chipsJS + "\n" + viewJS), Data: template.JS(data)})
	if err != nil {
		return fmt.Errorf("htmlview: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// title is the page's title: the scenario and its title, or an explored
// group's story.
func title(r Run) string {
	if r.Explored != nil {
		return exploredTitle(r.Explored)
	}
	t := "cachelab · " + r.Header.Scenario
	if r.Header.Title != "" {
		t += ": " + r.Header.Title
	}
	return strings.TrimSpace(t)
}
