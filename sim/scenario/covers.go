package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// idPattern is the shape of a behaviour ID in REFERENCE.md: a capital
// letter and one or two digits (P1, E12).
var idPattern = regexp.MustCompile(`^[A-Z][0-9]{1,2}$`)

// parseCovers reads the behaviour IDs a scenario covers from its opening
// comment (about, one line each, without the "#"): the IDs of its
// "# Covers:" line, each once, in the order written; none without one, or
// with "# Covers: none". IDs mentioned in the prose are not covers: a
// paragraph may say what another behaviour does without showing it. A word on the line that is
// not an ID, or a second Covers line, is an error at that line (its index
// in about, 0-based; the file's lines count from 1).
func parseCovers(about []string) (ids []string, line int, err error) {
	first := -1
	for n, l := range about {
		list, ok := strings.CutPrefix(l, "Covers:")
		if !ok {
			continue
		}
		if first >= 0 {
			return nil, n, fmt.Errorf("a second # Covers: line (the first is line %d): put every ID the scenario covers on one line", first+1)
		}
		first = n
		if strings.TrimSpace(list) == "none" {
			continue // said outright: it covers nothing
		}
		for _, id := range strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
			if !idPattern.MatchString(id) {
				return nil, n, fmt.Errorf("the # Covers: line lists behaviour IDs from REFERENCE.md (a capital letter and one or two digits, as P1 or E12), separated by spaces, or the word none; %q is not one", id)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, 0, nil
}
