package conformance

import (
	"archive/zip"
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// modulePath is the path users import; go.mod says it, and the docs do.
const modulePath = "github.com/tableemu/tableemu"

// testVersion is the version this checkout is served as by modProxy. A
// pre-release, so nothing could mistake it for a published one; @latest
// picks it because it is the only version the stand-in proxy lists.
const testVersion = "v0.0.0-test"

// modProxy returns a file:// module proxy (the layout GOPROXY documents:
// https://go.dev/ref/mod#goproxy-protocol) that serves this checkout as
// version testVersion of modulePath, as proxy.golang.org serves a tag of
// the repository once the release workflow has pushed it. The module zip
// holds what a tag would: the files Git tracks (and new ones it does not
// ignore), under the prefix module@version/ (https://go.dev/ref/mod#zip-files).
func modProxy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", "..", "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Skip("not a Git checkout: the module's files are the ones Git tracks")
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	prefix := modulePath + "@" + testVersion + "/"
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join("..", name))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link (a module zip holds neither)
		}
		b, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(prefix + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v := filepath.Join(dir, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"list":                []byte(testVersion + "\n"),
		testVersion + ".info": []byte(`{"Version":"` + testVersion + `","Time":"2026-01-01T00:00:00Z"}`),
		testVersion + ".mod":  gomod,
		testVersion + ".zip":  zb.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(v, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fileURL(dir)
}

// fileURL is the file:// URL of a local directory, as GOPROXY takes it.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}
