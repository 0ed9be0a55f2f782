package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// commit is the commit the binary was built from, for builds where Go
// records none: outside a Git checkout, or with -buildvcs=false, as in the
// container image's build (docker/build-binary.sh, TABLEEMU_COMMIT). Set
// with
//
//	go build -ldflags "-X main.commit=$(git rev-parse --short HEAD)" ./cmd/tableemu
var commit string

// version is the release version, for builds that are not of a module
// version (packaging/release/build.sh sets it from the tag with -X main.version).
// A `go install github.com/tableemu/tableemu/cmd/tableemu@v1.2.3` build
// needs none: Go records v1.2.3 as the main module's version.
var version string

// versionText is tableemu --version: the module version, the commit the
// binary was built from (what Go records when building inside a Git
// checkout, else the commit variable), and the Go release and platform.
func versionText() string {
	ver, rev, when, modified := version, commit, "", false
	if rev == "" {
		rev = "unknown"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if when != "" {
		rev += " (" + when + ")"
	}
	if modified {
		rev += " with uncommitted changes"
	}
	if ver == "" {
		ver = "unknown"
	}
	return fmt.Sprintf("tableemu %s\ncommit %s\n%s %s/%s\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
