//go:build unix

package packaging

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/version"
)

// TestReleaseArchive runs release.sh for this machine's target and checks its
// archive: the files a user needs beside the binary, a SHA256SUMS entry that
// matches, and a binary whose --version is internal/version's.
func TestReleaseArchive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("release.sh is a POSIX shell script")
	}
	out := t.TempDir()
	cmd := exec.Command("./release.sh", out)
	cmd.Env = append(os.Environ(), "TARGETS="+runtime.GOOS+"/"+runtime.GOARCH)
	cmd.Stderr = os.Stderr
	printed, err := cmd.Output()
	if err != nil {
		t.Fatalf("release.sh: %v", err)
	}
	if got := strings.TrimSpace(string(printed)); got != out {
		t.Errorf("release.sh printed %q, want the output directory %q", got, out)
	}

	name := "keyhive-" + version.Keyhive + "-" + runtime.GOOS + "-" + runtime.GOARCH
	archive := filepath.Join(out, name+".tar.gz")
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n"; string(sums) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", sums, want)
	}

	bin := filepath.Join(t.TempDir(), "keyhive")
	var names []string
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name == name+"/keyhive" {
			extractBinary(t, tr, bin, h.FileInfo().Mode())
		}
	}
	slices.Sort(names)
	want := []string{name + "/", name + "/CHANGELOG.md", name + "/LICENSE", name + "/README.md", name + "/keyhive", name + "/keyhive.conf"}
	if !slices.Equal(names, want) {
		t.Fatalf("archive holds %q, want %q", names, want)
	}
	sha, dirty := gitCommit(t)
	v, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^Keyhive server v=` + regexp.QuoteMeta(version.Keyhive) + ` sha=` + sha + ":" + dirty + ` redis=` + regexp.QuoteMeta(version.Redis) + ` `)
	if !line.Match(v) {
		t.Errorf("the archive's keyhive --version: %q, want %s...", v, line)
	}
}

func extractBinary(t *testing.T, r io.Reader, path string, mode os.FileMode) {
	t.Helper()
	if mode&0o111 == 0 {
		t.Errorf("the archive's binary has mode %v, not executable", mode)
	}
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
