package mermaid

import (
	"fmt"
	"regexp"
	"strings"
)

// The statements Render writes, and so the only ones Validate accepts.
var (
	participantRE = regexp.MustCompile(`^participant ([A-Za-z][A-Za-z0-9_]*) as (.+)$`)
	messageRE     = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)(->>|-->>|-x|--x)([A-Za-z][A-Za-z0-9_]*): (.+)$`)
	noteRE        = regexp.MustCompile(`^Note over ([A-Za-z][A-Za-z0-9_]*)(?:,([A-Za-z][A-Za-z0-9_]*))?: (.+)$`)
	rectRE        = regexp.MustCompile(`^rect rgba?\(\d{1,3}, \d{1,3}, \d{1,3}(, [01](\.\d+)?)?\)$`)
	// entity is what Mermaid reads as one character: #35; #lt; ...
	entityRE = regexp.MustCompile(`#[A-Za-z0-9]+;`)
)

// reserved are words Mermaid's sequence grammar takes as keywords, so no
// participant may be called by them.
var reserved = map[string]bool{"end": true, "loop": true, "alt": true, "else": true, "opt": true, "par": true, "and": true,
	"rect": true, "note": true, "participant": true, "actor": true, "critical": true, "break": true, "box": true,
	"activate": true, "deactivate": true, "autonumber": true, "title": true, "create": true, "destroy": true, "links": true, "link": true}

// Validate checks a diagram against the subset of Mermaid's sequence
// diagrams that Render writes, and against the limits GitHub renders
// within: it starts "sequenceDiagram" (after "%%" comments); participants
// are declared once, before every message and note, with ids Mermaid
// does not take as keywords; every message and note names declared
// participants; each rect is closed by an end, and no end comes without
// one; no text holds a character that ends a statement or starts an
// entity, a tag or a comment (";", "#" outside an entity code, "<"
// outside "<br/>", "%%"); and the text is at most MaxTextSize bytes with
// at most MaxEdges messages. It returns the first problem, with its line.
func Validate(diagram string) error {
	if len(diagram) > MaxTextSize {
		return fmt.Errorf("mermaid: %d characters, over mermaid's maxTextSize of %d", len(diagram), MaxTextSize)
	}
	v := validator{declared: map[string]bool{}}
	for i, l := range strings.Split(strings.TrimSuffix(diagram, "\n"), "\n") {
		if err := v.line(strings.TrimSpace(l)); err != nil {
			return fmt.Errorf("mermaid: line %d: %w: %q", i+1, err, l)
		}
	}
	switch {
	case !v.started:
		return fmt.Errorf("mermaid: no sequenceDiagram line")
	case v.depth != 0:
		return fmt.Errorf("mermaid: %d rect blocks not closed by end", v.depth)
	case v.messages > MaxEdges:
		return fmt.Errorf("mermaid: %d messages, over mermaid's maxEdges of %d", v.messages, MaxEdges)
	}
	return nil
}

type validator struct {
	started, used bool
	declared      map[string]bool
	depth         int
	messages      int
}

func (v *validator) line(l string) error {
	switch {
	case strings.HasPrefix(l, "%%") && !v.started:
		return nil
	case !v.started:
		if l != "sequenceDiagram" {
			return fmt.Errorf("want sequenceDiagram first")
		}
		v.started = true
		return nil
	case l == "end":
		if v.depth == 0 {
			return fmt.Errorf("end without a rect")
		}
		v.depth--
		return nil
	case rectRE.MatchString(l):
		v.depth++
		return nil
	}
	if m := participantRE.FindStringSubmatch(l); m != nil {
		return v.participant(m[1], m[2])
	}
	if m := messageRE.FindStringSubmatch(l); m != nil {
		v.messages++
		return v.uses(m[4], m[1], m[3])
	}
	if m := noteRE.FindStringSubmatch(l); m != nil {
		if m[2] == "" {
			return v.uses(m[3], m[1])
		}
		return v.uses(m[3], m[1], m[2])
	}
	return fmt.Errorf("not a statement this renderer writes")
}

func (v *validator) participant(id, label string) error {
	switch {
	case v.used:
		return fmt.Errorf("participant %s declared after the first message or note", id)
	case v.declared[id]:
		return fmt.Errorf("participant %s declared twice", id)
	case reserved[strings.ToLower(id)]:
		return fmt.Errorf("participant id %s is a Mermaid keyword", id)
	}
	v.declared[id] = true
	return safeText(label)
}

func (v *validator) uses(text string, ids ...string) error {
	v.used = true
	for _, id := range ids {
		if !v.declared[id] {
			return fmt.Errorf("participant %s used before it is declared", id)
		}
	}
	return safeText(text)
}

// safeText reports a character Mermaid or GitHub would read as more than
// text.
func safeText(s string) error {
	s = strings.ReplaceAll(entityRE.ReplaceAllString(s, ""), "<br/>", "")
	switch {
	case strings.TrimSpace(s) == "" && s != "":
		return fmt.Errorf("empty text")
	case strings.Contains(s, ";"):
		return fmt.Errorf(`";" ends a statement`)
	case strings.Contains(s, "#"):
		return fmt.Errorf(`"#" outside an entity code`)
	case strings.Contains(s, "<"):
		return fmt.Errorf(`"<" outside <br/>`)
	case strings.Contains(s, "%%"):
		return fmt.Errorf(`"%%%%" starts a comment`)
	}
	return nil
}
