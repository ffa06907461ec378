package controller_test

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/cachelab/cachelab/controller"
)

// comparison is one side's answer, in a form both sides share: the order,
// and which argument was refused ("" when none was).
type comparison struct {
	Order   int
	Invalid string
}

func ours(a, b string) comparison {
	n, err := controller.CompareResourceVersions(a, b)
	var bad controller.InvalidResourceVersionError
	if errors.As(err, &bad) {
		return comparison{Order: n, Invalid: "rv:" + bad.RV}
	}
	if err != nil {
		return comparison{Invalid: "unexpected error " + err.Error()}
	}
	return comparison{Order: n}
}

func theirs(a, b string) comparison {
	n, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		rv, ok := strings.CutPrefix(err.Error(), "resource version is not well formed: ")
		if !ok {
			return comparison{Invalid: "unexpected error " + err.Error()}
		}
		return comparison{Order: n, Invalid: "rv:" + rv}
	}
	return comparison{Order: n}
}

func checkPair(t *testing.T, a, b string) {
	t.Helper()
	if got, want := ours(a, b), theirs(a, b); got != want {
		t.Errorf("CompareResourceVersions(%q, %q) = %+v, apimachinery says %+v", a, b, got, want)
	}
}

// apimachinery: util/resourceversion CompareResourceVersion (K6): the
// cases a reader would try first, valid and malformed.
func TestCompareResourceVersionsTable(t *testing.T) {
	rvs := []string{"", "0", "00", "01", "1", "2", "9", "10", "11", "99", "100",
		"-1", "+1", " 1", "1 ", "1.0", "1e3", "a", "١", "18446744073709551616",
		"18446744073709551615", "99999999999999999999999999", "100000000000000000000000000"}
	for _, a := range rvs {
		for _, b := range rvs {
			checkPair(t, a, b)
		}
	}
}

// apimachinery: util/resourceversion CompareResourceVersion (K6): pairs
// drawn from a seeded generator that mixes well-formed integers of every
// length with the ways a resourceVersion goes wrong.
func TestCompareResourceVersionsGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(5504))
	for range 20000 {
		a := genRV(r)
		b := genRV(r)
		if r.Intn(4) == 0 {
			b = a // equal pairs are rare otherwise
		}
		checkPair(t, a, b)
	}
}

// genRV returns a resourceVersion, well formed three times in four.
func genRV(r *rand.Rand) string {
	digits := func(n int) string {
		var sb strings.Builder
		sb.WriteByte(byte('1' + r.Intn(9)))
		for range n - 1 {
			sb.WriteByte(byte('0' + r.Intn(10)))
		}
		return sb.String()
	}
	rv := digits(1 + r.Intn(25))
	switch r.Intn(16) {
	case 0:
		return ""
	case 1:
		return "0" + rv
	case 2:
		return "-" + rv
	case 3:
		i := r.Intn(len(rv) + 1)
		return rv[:i] + string("x. /+\u0661"[r.Intn(6)]) + rv[i:]
	}
	return rv
}

// apimachinery: util/resourceversion CompareResourceVersion (K6): any
// two strings.
func FuzzCompareResourceVersions(f *testing.F) {
	f.Add("1", "2")
	f.Add("10", "9")
	f.Add("01", "1")
	f.Add("", "0")
	f.Fuzz(func(t *testing.T, a, b string) { checkPair(t, a, b) })
}
