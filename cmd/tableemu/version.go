package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionText is tableemu --version: the module version, the commit the
// binary was built from (Go records it when building inside a Git
// checkout), and the Go release and platform.
func versionText() string {
	version, commit, when, modified := "unknown", "unknown", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if when != "" {
		commit += " (" + when + ")"
	}
	if modified {
		commit += " with uncommitted changes"
	}
	return fmt.Sprintf("tableemu %s\ncommit %s\n%s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
