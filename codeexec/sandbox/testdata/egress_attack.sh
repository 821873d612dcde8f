#!/bin/sh
# Uses the network from inside a sandbox with an egress allowlist, through
# the proxy (curl and Python's urllib, as they read the proxy variables)
# and around it (raw sockets). $1: an allowed plain HTTP port of 127.0.0.1;
# $2: an allowed TLS port of localhost; $3: a live port of 127.0.0.1 that is
# not listed. Each line is "name: result".
P=$1 Q=$2 R=$3
echo "proxy: $HTTP_PROXY $https_proxy no_proxy=$NO_PROXY"
echo "curl-http: $(curl -sS --max-time 20 http://127.0.0.1:$P/curl 2>&1)"
echo "curl-https: $(curl -sS -k --max-time 20 https://localhost:$Q/ 2>&1)"
echo "curl-other: $(curl -s -o /dev/null -w '%{http_code} %header{x-proxy-error}' --max-time 20 http://127.0.0.1:$R/)"
echo "curl-direct: $(curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$P/ 2>&1)"
exec python3 - "$P" "$Q" "$R" <<'PY'
import socket, ssl, sys, urllib.error, urllib.request
P, Q, R = sys.argv[1:4]
def show(name, f):
    try:
        print(name + ":", f())
    except urllib.error.HTTPError as e:
        print(name + ":", e.code, e.headers.get("X-Proxy-Error"))
    except Exception as e:
        print(name + ":", type(e).__name__, getattr(e, "reason", e))
insecure = ssl._create_unverified_context()
show("urllib-http", lambda: urllib.request.urlopen("http://127.0.0.1:%s/urllib" % P, timeout=20).read().decode())
show("urllib-https", lambda: urllib.request.urlopen("https://localhost:%s/" % Q, timeout=20, context=insecure).read().decode())
show("urllib-other", lambda: urllib.request.urlopen("http://127.0.0.1:%s/" % R, timeout=20).read())
show("urllib-other-tls", lambda: urllib.request.urlopen("https://127.0.0.1:%s/" % R, timeout=20, context=insecure).read())
show("direct-loopback", lambda: socket.create_connection(("127.0.0.1", int(P)), timeout=5))
show("direct-net", lambda: socket.create_connection(("192.0.2.1", 80), timeout=5))
PY
