package listwatch

import (
	"strings"
	"testing"
)

// FuzzDecodeContinue: a continue token is client input. No token may
// panic the decoder or yield a start key outside the list's prefix, and
// every token the server makes decodes back to what it encoded. (E4)
func FuzzDecodeContinue(f *testing.F) {
	const prefix = "/registry/pods/"
	for _, key := range []string{"/registry/pods/a/x\x00", "/registry/pods/b", "/registry/pods/../secrets/x"} {
		for _, rv := range []int64{-1, 1, 42} {
			if tok, err := encodeContinue(key, prefix, rv); err == nil {
				f.Add(tok)
			}
		}
	}
	f.Add("")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiIuLi8uLi9ldGMifQ")
	f.Fuzz(func(t *testing.T, token string) {
		key, rv, err := decodeContinue(token, prefix)
		if err != nil {
			return
		}
		if !strings.HasPrefix(key, prefix) || strings.Contains(key, "/../") || rv == 0 {
			t.Fatalf("accepted token %q gives key %q rv %d", token, key, rv)
		}
		again, err := encodeContinue(key, prefix, rv)
		if err != nil {
			t.Fatalf("re-encode %q: %v", key, err)
		}
		if k2, rv2, err := decodeContinue(again, prefix); err != nil || k2 != key || rv2 != rv {
			t.Fatalf("round trip of %q: %q %d %v", key, k2, rv2, err)
		}
	})
}
