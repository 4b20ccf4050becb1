package crashtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildKeyhive builds ./cmd/keyhive of the current module into dir with a
// plain go build (no race detector, whatever the caller runs under: the
// server's speed decides how much a trial writes).
func BuildKeyhive(dir string) (string, error) {
	bin := filepath.Join(dir, "keyhive")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/keyhive/keyhive/cmd/keyhive")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/keyhive: %v\n%s", err, out)
	}
	return bin, nil
}
