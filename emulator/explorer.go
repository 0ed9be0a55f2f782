package emulator

import (
	"net/http"

	"github.com/tableemu/tableemu/emulator/explorer"
)

// The data explorer (emulator/explorer) is served beside the API at
// /_tableemu/, like the insights report. It is static files only: the page
// reaches the data through the Table API with credentials, like any SDK.
// Server.serveTool hands it every path under /_tableemu/ that is not the
// insights report or an isolation endpoint (isolation/http.go).

func newExplorer(cfg Config) http.Handler {
	return explorer.New(explorer.Options{DevAccount: publicDevAccount(cfg.Accounts), Insights: cfg.Insights})
}

// ExplorerURL is the data explorer's address on a server listening at
// addr: http://127.0.0.1:10002/_tableemu/ (printed at start-up).
func ExplorerURL(scheme, addr string) string {
	return scheme + "://" + addr + explorer.Prefix
}

// publicDevAccount returns the development account's name when it is
// configured with its well-known (public) key, else "": then, and only
// then, a loopback client needs no credentials to see its data through
// the explorer or the insights report.
func publicDevAccount(accounts []Account) string {
	for _, a := range accounts {
		if a.Name == DevAccount && len(a.Keys) > 0 && a.Keys[0] == DevKey {
			return a.Name
		}
	}
	return ""
}
