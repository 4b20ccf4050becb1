package difftest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildKeyhive builds ./cmd/keyhive of the module containing the working
// directory into dir, for tools that run it as its own process
// (bench/memory, cmd/keyhive-bench).
func BuildKeyhive(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the keyhive module; run from the repo or pass -keyhive")
	}
	bin := filepath.Join(dir, "keyhive")
	fmt.Fprintln(os.Stderr, "building keyhive (go build ./cmd/keyhive)")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/keyhive")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/keyhive: %w", err)
	}
	return bin, nil
}
