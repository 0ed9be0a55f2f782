//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is the user the tests of permissions run the server as when they
// run as root, who may write anywhere.
const nobody = 65534

// TestUnwritableDataDirectory: a data directory the user may not write,
// one that cannot be created because its parent is not writable, and a
// database file (or its -wal and -shm) left read-only for this user each
// stop the start with exit 1 and one line that names what cannot be
// written and how to get past it: another --location, or
// --inMemoryPersistence (as the port-in-use message names --tablePort).
// Nothing is left behind. As root the server runs as nobody; the
// directories it should be able to write are then nobody's.
func TestUnwritableDataDirectory(t *testing.T) {
	bin := binary(t)
	root := os.Geteuid() == 0
	if root {
		// The binary's directory must be open to that user too.
		os.Chmod(filepath.Dir(bin), 0o755)
	}
	// mine makes dir a directory the server's user may write.
	mine := func(t *testing.T, dir string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if root {
			os.Chown(dir, nobody, nobody)
		}
	}
	// notMine makes dir a directory the server's user may not write.
	notMine := func(t *testing.T, dir string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if !root {
			os.Chmod(dir, 0o555)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
		}
	}
	// database leaves in dir the files of a server killed while it ran, as
	// the server's user, and then makes the named ones read-only for it.
	database := func(t *testing.T, dir string, readOnly ...string) {
		mine(t, dir)
		p := startCmd(t, serverAs(t, bin, dir, "--tablePort", "0", "--location", dir, "--silent"))
		p.ready()
		p.signal(syscall.SIGKILL)
		p.exit(10 * time.Second)
		// Its note of the holder goes, so that the failed start, which
		// writes and removes one, leaves the directory as it found it.
		os.Remove(filepath.Join(dir, "tableemu.lock"))
		for _, name := range readOnly {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err) // the files the case is about must be there
			}
			if root {
				os.Chown(path, 0, 0) // another user's file, 0644
			} else {
				os.Chmod(path, 0o444)
			}
		}
	}
	db := "tableemu.sqlite"
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, base string) (location string)
		want  []string
	}{
		{"directory not writable", func(t *testing.T, base string) string {
			notMine(t, filepath.Join(base, "data"))
			return filepath.Join(base, "data")
		}, []string{"data directory {base}/data is not writable", "permission denied",
			"; start with --location naming a directory you can write, or --inMemoryPersistence"}},
		{"parent not writable", func(t *testing.T, base string) string {
			notMine(t, filepath.Join(base, "data"))
			return filepath.Join(base, "data", "new", "deeper")
		}, []string{"cannot create data directory {base}/data/new/deeper: mkdir {base}/data/new: permission denied",
			"; start with --location naming a directory you can write, or --inMemoryPersistence"}},
		{"database file read-only", func(t *testing.T, base string) string {
			database(t, filepath.Join(base, "data"), db)
			return filepath.Join(base, "data")
		}, []string{"open {base}/data/" + db + ": cannot write the database file", "read-only for this user",
			"; make them writable for this user", "another --location, or --inMemoryPersistence"}},
		{"-wal and -shm read-only", func(t *testing.T, base string) string {
			database(t, filepath.Join(base, "data"), db+"-wal", db+"-shm")
			return filepath.Join(base, "data")
		}, []string{"open {base}/data/" + db + ": cannot write the database file or its -wal and -shm files",
			"; make them writable for this user", "another --location, or --inMemoryPersistence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := os.MkdirTemp("", "tableemu-ro")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			os.Chmod(base, 0o755)
			loc := tc.setup(t, base)
			before := snapshot(t, base)
			p := startCmd(t, serverAs(t, bin, base, "--tablePort", "0", "--location", loc))
			if code := p.exit(15 * time.Second); code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, p.out)
			}
			out, lines := p.out.String(), p.lines()
			if len(lines) != 1 || !logLine.MatchString(lines[0]) || !strings.Contains(lines[0], " error: ") {
				t.Errorf("want one error line in the log format, got:\n%s", out)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "{base}", base); !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			if after := snapshot(t, base); after != before {
				t.Errorf("the failed start changed the files:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// serverAs is the binary with args, run in dir as this user, or as nobody
// when this is root.
func serverAs(t *testing.T, bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS=")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	return cmd
}
