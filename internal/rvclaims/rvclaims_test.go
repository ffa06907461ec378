package rvclaims

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = `request          w1 WATCH-LIST rv="" match=NotOlderThan sendInitialEvents=true bookmarks timeout=[5m,10m)
watch            w1 BOOKMARK rv 3 (initial events end)
request          w2 WATCH rv=3 bookmarks timeout=[5m,10m)
request          LIST rv="" limit=500 continue=<token>
request          w3 WATCH-LIST rv=3 match=NotOlderThan sendInitialEvents=true bookmarks timeout=[5m,10m)
watch            w2 ERROR 410 Expired: too old resource version: 2 (12)
handler/h1       OnAdd    ns0/c@5
`

// Each verb binds its resourceVersion, and a claim holds only where the
// trace shows the request it names.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // the claims refused, by their words
	}{
		{`The reflector relists from rv 3.`, nil},
		{`The reflector forgets its resourceVersion, relists from rv "", and`, []string{`relists from rv ""`}},
		{`It relists after a backoff, from its own rv 3 (a 410 would send it to rv "")`, nil},
		{`The first re-watch, from rv 3, is accepted.`, nil},
		{`The re-watch at rv 5 is refused.`, []string{`re-watch at rv 5`}}, // rv 5 is shown (ns0/c@5), not as a WATCH
		{`The re-watch at rv 6 is refused.`, []string{`rv 6`, `re-watch at rv 6`}},
		{`its LIST at rv "0" is answered`, []string{`rv "0"`, `LIST at rv "0"`}},
		{`new informers list from rv "" and do`, nil},
		{`drops rv 2 to 12; the watch at rv 12 ends`, nil},
		{`ns0/c arrives at rv 5, and etcd is at rv 7`, []string{`rv 7`}},
		{`a list of etcd, which is at rv 3`, nil},
		{`no resourceVersion named here`, nil},
	} {
		var got []string
		for _, p := range Check(tc.text, sample) {
			got = append(got, p[1:strings.Index(p, `": `)])
		}
		want := tc.want
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], `"`, `\"`)
		}
		if !cmp.Equal(got, want) {
			t.Errorf("Check(%q): refused %q, want %q", tc.text, got, want)
		}
	}
}

// A continue page is not a list of its own: a relist from rv "" is not
// borne out by the first list's second page.
func TestContinuePageIsNoRelist(t *testing.T) {
	if got := Check(`then relists from rv ""`, sample); len(got) != 1 {
		t.Errorf("got %q, want the relist refused", got)
	}
}

// Split takes out the parentheses and sentences that name the marker.
func TestSplit(t *testing.T) {
	about, rest := Split("A watch-list waits. (In the classic stack the first\nLIST is at rv \"0\".) Then it ends. The classic stack lists.", "classic stack")
	if want := `(In the classic stack the first LIST is at rv "0".) The classic stack lists.`; about != want {
		t.Errorf("about: got %q, want %q", about, want)
	}
	if want := "A watch-list waits.  Then it ends. "; rest != want {
		t.Errorf("rest: got %q, want %q", rest, want)
	}
}
