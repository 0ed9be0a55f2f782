package doctest

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

// Docs that run the go command run it as a user would, with the go
// command configured as on a user's machine (GoEnv): the module proxy this
// machine is configured with (go env GOPROXY; proxy.golang.org by
// default), an empty module cache of the test's own, no workspace, this
// toolchain. So on a new machine with empty caches every module a
// document's commands need is fetched as the user's go command fetches it,
// and a document that relies on a module only this machine has fails.
//
// Two stand-ins, both module proxies given in front of the configured one:
//   - this checkout, served as a version of github.com/tableemu/tableemu
//     (ModProxy), as the release workflow publishes it from a tag, so that
//     `go get github.com/tableemu/tableemu@latest` and `go install
//     .../cmd/tableemu@latest` build what is being tested;
//   - this machine's module cache, read as a proxy (GOPROXY's file:// form),
//     so modules it already holds are not downloaded again; what it lacks
//     falls through to the configured proxy.

// ModulePath is the path users import; go.mod says it, and the docs do.
const ModulePath = "github.com/tableemu/tableemu"

// TestVersion is the version this checkout is served as by ModProxy. A
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
	if cache := strings.TrimSpace(Run(t, os.Environ(), ".", "go env GOMODCACHE")); cache != "" {
		if fi, err := os.Stat(filepath.Join(cache, "cache", "download")); err == nil && fi.IsDir() {
			proxies = append(proxies, FileURL(filepath.Join(cache, "cache", "download")))
		}
	}
	return append(os.Environ(),
		"GOPROXY="+strings.Join(append(proxies, configured), ","),
		// The stand-in version of tableemu is not in the checksum
		// database; every other module is checked against it as usual.
		"GONOSUMDB="+ModulePath,
		// -modcacherw: the test's module cache can be removed afterwards.
		// -trimpath: what is compiled from it is named by module and
		// version, not by the cache's directory, so the build cache
		// serves it again to the next test and the next run, where each
		// new module cache would otherwise compile every dependency
		// (modernc.org/sqlite for minutes) anew.
		"GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw -trimpath", "GOWORK=off", "GOTOOLCHAIN=local")
}

// ModProxy returns a file:// module proxy (the layout GOPROXY documents:
// https://go.dev/ref/mod#goproxy-protocol) that serves this checkout as
// version TestVersion of ModulePath, as proxy.golang.org serves a tag of
// the repository once the release workflow has pushed it. The module zip
// holds what a tag would: the files Git tracks (and new ones it does not
// ignore), under the prefix module@version/ (https://go.dev/ref/mod#zip-files).
func ModProxy(t testing.TB) string {
	t.Helper()
	root := Root(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Skip("not a Git checkout: the module's files are the ones Git tracks")
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	prefix := ModulePath + "@" + TestVersion + "/"
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
		"list":                []byte(TestVersion + "\n"),
		TestVersion + ".info": []byte(`{"Version":"` + TestVersion + `","Time":"2026-01-01T00:00:00Z"}`),
		TestVersion + ".mod":  gomod,
		TestVersion + ".zip":  zb.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(v, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return FileURL(dir)
}

// FileURL is the file:// URL of a local directory, as GOPROXY takes it.
func FileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}
