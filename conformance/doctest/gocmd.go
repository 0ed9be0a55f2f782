package doctest

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Docs that run the go command run it as a user would (GoEnv): the module
// proxy this machine is configured with (go env GOPROXY; proxy.golang.org
// by default), this machine's module and build caches, no workspace, this
// toolchain. In CI those caches are the empty ones of `go test ./...`'s
// leg (.ci/run), so every module a document's commands need is fetched
// as a new user's go command fetches it, and a document that relies on a
// module only this machine has fails there.
//
// The module caches are shared, not a new one per test, for the compiler's
// sake: the build cache keys a package by its source directory, so
// modernc.org/sqlite extracted into a module cache of the test's own
// compiled again, a minute and a half of CPU per run, where the shared one
// finds what `go test ./...` compiled for this checkout.
//
// One stand-in, a module proxy given in front of the configured one: this
// checkout, served as a version of github.com/tableemu/tableemu
// (ModProxy), as the release workflow publishes it from a tag, so that
// `go get github.com/tableemu/tableemu@latest` and `go install
// .../cmd/tableemu@latest` build what is being tested. Each call serves a
// version of its own, and removes it from the module cache when its test
// ends: the module cache never fetches a version it holds again, so a
// version left there would be this checkout as it was.

// ModulePath is the path users import; go.mod says it, and the docs do.
const ModulePath = "github.com/tableemu/tableemu"

// TestVersion begins every version ModProxy serves this checkout as. A
// pre-release, so nothing could mistake it for a published one; @latest
// picks it because it is the only version the stand-in proxy lists.
const TestVersion = "v0.0.0-test"

// GoEnv is the environment of the go commands a user types (see above);
// proxies, if any, are put in front of the configured proxy. It skips the
// test in -short mode, and where the go command fetches no modules.
func GoEnv(t testing.TB, proxies ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("fetches and builds modules with the go command")
	}
	configured := strings.TrimSpace(Run(t, os.Environ(), ".", "go env GOPROXY"))
	if configured == "" || configured == "off" {
		t.Skipf("GOPROXY is %q: the go command of this machine fetches no modules", configured)
	}
	return append(os.Environ(),
		"GOPROXY="+strings.Join(append(proxies, configured), ","),
		// The stand-in version of tableemu is not in the checksum
		// database; every other module is checked against it as usual.
		"GONOSUMDB="+ModulePath,
		// -modcacherw: the stand-in version can be removed afterwards.
		"GOFLAGS=-modcacherw", "GOWORK=off", "GOTOOLCHAIN=local")
}

// ModProxy returns a file:// module proxy (the layout GOPROXY documents:
// https://go.dev/ref/mod#goproxy-protocol) that serves this checkout as
// version TestVersion of ModulePath, as proxy.golang.org serves a tag of
// the repository once the release workflow has pushed it. The module zip
// holds what a tag would: the files Git tracks (and new ones it does not
// ignore), under the prefix module@version/ (https://go.dev/ref/mod#zip-files).
func ModProxy(t testing.TB) (proxy, version string) {
	t.Helper()
	root := Root(t)
	var id [6]byte
	rand.Read(id[:])
	version = fmt.Sprintf("%s.r%x", TestVersion, id)
	t.Cleanup(func() { forget(t, version) })
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Skip("not a Git checkout: the module's files are the ones Git tracks")
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	prefix := ModulePath + "@" + version + "/"
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link (a module zip holds neither)
		}
		b, err := os.ReadFile(filepath.Join(root, name))
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
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v := filepath.Join(dir, filepath.FromSlash(ModulePath), "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  gomod,
		version + ".zip":  zb.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(v, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return FileURL(dir), version
}

// forget removes version of ModulePath from this machine's module cache:
// its files, its downloads, and its line in the download's version list.
func forget(t testing.TB, version string) {
	cache := strings.TrimSpace(Run(t, os.Environ(), ".", "go env GOMODCACHE"))
	if cache == "" {
		return
	}
	// The cache's paths are the module path with upper case escaped; ours
	// has none.
	os.RemoveAll(filepath.Join(cache, filepath.FromSlash(ModulePath)+"@"+version))
	dl := filepath.Join(cache, "cache", "download", filepath.FromSlash(ModulePath), "@v")
	for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock"} {
		os.Remove(filepath.Join(dl, version+ext))
	}
	if b, err := os.ReadFile(filepath.Join(dl, "list")); err == nil {
		var keep []string
		for _, v := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if v != "" && v != version {
				keep = append(keep, v+"\n")
			}
		}
		if len(keep) == 0 {
			os.Remove(filepath.Join(dl, "list"))
		} else {
			os.WriteFile(filepath.Join(dl, "list"), []byte(strings.Join(keep, "")), 0o644)
		}
	}
}

// FileURL is the file:// URL of a local directory, as GOPROXY takes it.
func FileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}
