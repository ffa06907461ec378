package mermaid

import (
	"strings"
	"testing"
)

const valid = `%% a comment
sequenceDiagram
    participant etcd as etcd
    participant api as kube-apiserver
    rect rgb(255, 228, 225)
        Note over etcd,api: step 1 · a#59; b #35;3 #lt;none> <br/>x
        api->>etcd: ns0/a@2 ADDED
        api--xetcd: ⚠ 500 InternalError
    end
`

// Validate accepts what Render writes and rejects, with the line, each
// thing Mermaid or GitHub would refuse or misread.
func TestValidate(t *testing.T) {
	if err := Validate(valid); err != nil {
		t.Fatalf("a valid diagram: %v", err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"no header", "sequenceDiagram\n", "", "line 2: want sequenceDiagram first"},
		{"undeclared", "api->>etcd", "api->>idx", "participant idx used before it is declared"},
		{"declared late", "    end\n", "    end\n    participant idx as indexer\n", "declared after the first message"},
		{"declared twice", "participant api as kube-apiserver", "participant etcd as kube-apiserver", "participant etcd declared twice"},
		{"keyword id", "participant api as kube-apiserver\n", "participant api as kube-apiserver\n    participant end as x\n", "is a Mermaid keyword"},
		{"rect not closed", "    end\n", "", "1 rect blocks not closed by end"},
		{"end without rect", "    rect rgb(255, 228, 225)\n", "", "end without a rect"},
		{"semicolon", "ADDED", "ADDED; more", `";" ends a statement`},
		{"hash", "ADDED", "ADDED #3", `"#" outside an entity code`},
		{"tag", "ADDED", "ADDED <b>", `"<" outside <br/>`},
		{"comment", "ADDED", "ADDED %% no", `"%%" starts a comment`},
		{"other statement", "api->>etcd", "loop x\napi->>etcd", "not a statement this renderer writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(strings.Replace(valid, tc.from, tc.to, 1))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if err := Validate(valid + strings.Repeat("    api->>etcd: x\n", MaxEdges)); err == nil || !strings.Contains(err.Error(), "over mermaid's maxEdges") {
		t.Errorf("too many messages: %v", err)
	}
	if err := Validate(valid + strings.Repeat("%", MaxTextSize)); err == nil || !strings.Contains(err.Error(), "over mermaid's maxTextSize") {
		t.Errorf("too long: %v", err)
	}
}
