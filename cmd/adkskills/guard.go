package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// localOnly answers, unless allowRemote, only requests from this machine
// (notLocal), for the commands that serve HTTP (web, mcp): whoever reaches
// them can run the skills' scripts on this host.
func localOnly(command string, next http.Handler, allowRemote bool) http.Handler {
	if allowRemote {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := notLocal(r); reason != "" {
			http.Error(w, "adkskills "+command+" answers only this machine: "+reason+" (start it with --allow-remote to serve others)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// notLocal says why r is not from this machine, or "" when it is.
func notLocal(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || !loopbackHost(host, false) {
		return "the request comes from " + r.RemoteAddr
	}
	if host := hostOnly(r.Host); !loopbackHost(host, true) {
		return fmt.Sprintf("the request names the host %q", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !loopbackHost(u.Hostname(), true) {
			return fmt.Sprintf("the request comes from the page %q", origin)
		}
	}
	return ""
}

// hostOnly drops the port of a Host header.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// loopbackHost reports a loopback IP address or, when names are allowed,
// localhost.
func loopbackHost(host string, names bool) bool {
	if names && (host == "localhost" || host == "localhost.") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
