# Sourced by bench/tls.sh and bench/mcp-wrk.sh (with $bench set to the
# script's name): nginx from Debian, installed when missing (as root),
# started on a configuration of the caller's servers, its master's pid
# added to the caller's pids (which its exit trap kills).
if ! command -v nginx >/dev/null; then
	[ "$(id -u)" = 0 ] || { echo "$bench: nginx is missing (apt-get install nginx-light)" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx-light >/dev/null
fi

nginx_start() { # WORK SERVERS: nginx in WORK (its pid in WORK/nginx.pid) with SERVERS in http {}
	mkdir -p "$1/nginx"
	cat >"$1/nginx.conf" <<CONF
worker_processes auto;
pid $1/nginx.pid;
error_log $1/nginx.err;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $1/nginx/body;
	proxy_temp_path $1/nginx/proxy;
$2
}
CONF
	nginx -p "$1" -c "$1/nginx.conf"
	for _ in $(seq 50); do
		[ -s "$1/nginx.pid" ] && pids+=("$(cat "$1/nginx.pid")") && return 0
		sleep 0.1
	done
	echo "$bench: nginx did not start: $(cat "$1/nginx.err")" >&2
	exit 1
}
