package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// asPostgres returns the credential to run PostgreSQL's programs with:
// none when the tests do not run as root (they run as the current user);
// as root, the postgres user's (Debian's package creates it), since the
// server refuses to run as root. dir is given to that user.
func asPostgres(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs the user postgres to run as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// credentialT is the credential asPostgres returns.
type credentialT = syscall.Credential

// giveTo gives the file at path to cred's user (none: it stays the
// current user's).
func giveTo(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(path, int(cred.Uid), int(cred.Gid))
}

func setCredential(cmd *exec.Cmd, cred *syscall.Credential) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = cred
}

// dieWithParent has the kernel kill the server if the test process dies
// first; its backends notice the postmaster's death and exit too.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// stopProcess asks for PostgreSQL's immediate shutdown.
func stopProcess(p *os.Process) { p.Signal(syscall.SIGQUIT) }
