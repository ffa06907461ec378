package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The workshop room's devcontainer (.devcontainer/devcontainer.json, which
// may hold comments; this one holds none, so that encoding/json reads it)
// uses the Go go.mod asks for, prepares the build cache, installs the
// full cachelab (every world, so that no run builds on the day), and has
// VS Code's Go extension.
func TestDevcontainerPreparesARoom(t *testing.T) {
	data, err := os.ReadFile("../../.devcontainer/devcontainer.json")
	if err != nil {
		t.Fatal(err)
	}
	var dc struct {
		Image           string `json:"image"`
		OnCreateCommand string `json:"onCreateCommand"`
		Customizations  struct {
			VSCode struct {
				Extensions []string `json:"extensions"`
			} `json:"vscode"`
		} `json:"customizations"`
	}
	if err := json.Unmarshal(data, &dc); err != nil {
		t.Fatalf(".devcontainer/devcontainer.json: %v", err)
	}
	if want := "mcr.microsoft.com/devcontainers/go:" + goModMinor(t); dc.Image != want {
		t.Errorf("image %q, want %q (go.mod's Go)", dc.Image, want)
	}
	for _, step := range []string{"go mod download", "-tags full ./cmd/cachelab", "./notebooks/..."} {
		if !strings.Contains(dc.OnCreateCommand, step) {
			t.Errorf("onCreateCommand %q does not prepare %q", dc.OnCreateCommand, step)
		}
	}
	if !slices.Contains(dc.Customizations.VSCode.Extensions, "golang.go") {
		t.Errorf("extensions %q lack golang.go", dc.Customizations.VSCode.Extensions)
	}
}

// goModMinor is the Go release go.mod's go line names, as 1.26.
func goModMinor(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	return string(m[1])
}
