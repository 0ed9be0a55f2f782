package auth

import (
	"net"
	"net/http"
	"strings"
)

// Loopback reports whether r came over a loopback connection (both ends)
// under a loopback host name: where the explorer, the insights report and
// the isolation endpoints let the development account in without its key. The host name check keeps a page loaded
// through another name that resolves here (DNS rebinding) from opening
// the development account by itself; it could still sign with the public
// key, as any client can, but the explorer does not do it for it.
func Loopback(r *http.Request) bool {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if la == nil || !addrLoopback(la.String()) || !addrLoopback(r.RemoteAddr) {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func addrLoopback(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
