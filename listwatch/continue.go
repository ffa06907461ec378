package listwatch

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueToken is kube-apiserver's continue token
// (k8s.io/apiserver/pkg/storage/continue.go), so tokens are opaque in the
// same way: base64url(JSON) of the revision the first page was read at and
// the key to start from, relative to the list's prefix.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueVersion = "meta.k8s.io/v1"

// encodeContinue makes the token that resumes a list at key (absolute) at
// revision rv; rv -1 means "at the latest revision".
func encodeContinue(key, prefix string, rv int64) (string, error) {
	rel := strings.TrimPrefix(key, prefix)
	if rel == key {
		return "", fmt.Errorf("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(continueToken{APIVersion: continueVersion, ResourceVersion: rv, StartKey: rel})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// decodeContinue returns the absolute start key and revision of a token,
// or a message saying why it is not valid.
func decodeContinue(token, prefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	switch {
	case c.APIVersion != continueVersion:
		return "", 0, fmt.Errorf("continue key is not valid: server does not recognize this encoded version")
	case c.ResourceVersion == 0:
		return "", 0, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	case c.StartKey == "":
		return "", 0, fmt.Errorf("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	}
	// Refuse "../" tricks that would leave the prefix.
	if path.Clean("/"+c.StartKey) != "/"+c.StartKey {
		return "", 0, fmt.Errorf("continue key is not valid")
	}
	return prefix + c.StartKey, c.ResourceVersion, nil
}
