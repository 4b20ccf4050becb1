package version

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		info  *debug.BuildInfo
		sha   string
		dirty bool
	}{
		{nil, "00000000", false},
		{&debug.BuildInfo{}, "00000000", false},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "fd06dbc2a1b2c3d4e5f60718293a4b5c6d7e8f90"},
			{Key: "vcs.modified", Value: "true"},
		}}, "fd06dbc2", true},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "00000000", false},
	} {
		if sha, dirty := fromBuildInfo(c.info); sha != c.sha || dirty != c.dirty {
			t.Errorf("fromBuildInfo(%v) = %s %v, want %s %v", c.info, sha, dirty, c.sha, c.dirty)
		}
	}
}

// TestLine: keyhive --version has redis-server -v's shape.
func TestLine(t *testing.T) {
	re := regexp.MustCompile(`^Keyhive server v=` + regexp.QuoteMeta(Keyhive) +
		` sha=[0-9a-f]{8}:[01] redis=` + regexp.QuoteMeta(Redis) + ` go=go\S+ bits=(32|64)$`)
	if l := Line(); !re.MatchString(l) {
		t.Errorf("Line() = %q, want %s", l, re)
	}
}

// TestVersionCopies: the docs' sample --version output and archive names
// and CHANGELOG.md's newest entry name Keyhive, so a version change cannot
// miss them.
func TestVersionCopies(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	// keyhive --version's output, the archives' names and their directory
	sample := regexp.MustCompile(`Keyhive server v=(\S+)|keyhive-(\d+\.\d+\.\d+)-|dist/(\d+\.\d+\.\d+)`)
	for _, path := range append(docs, "../../README.md") {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sample.FindAllSubmatch(text, -1) {
			if string(m[1])+string(m[2])+string(m[3]) != Keyhive {
				t.Errorf("%s shows %s, want version %s", path, m[0], Keyhive)
			}
		}
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^## \[([^\]]+)\]`).FindSubmatch(changelog); m == nil || string(m[1]) != Keyhive {
		t.Errorf("CHANGELOG.md's newest entry is %q, want [%s]", m, Keyhive)
	}
}
