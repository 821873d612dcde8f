# Attack: leave the run's session and process group, and outlive the run.
# $1: "exit" (the script ends as soon as the escapee is out) or "hang" (it
# runs into the timeout).
ready="$TMPDIR/escaped"
# setsid(1) calls setsid(2) before bash runs: the file proves the escape.
setsid bash -c 'touch "$1"; while :; do sleep 0.2; done' escapee "$ready" </dev/null >/dev/null 2>&1 &
for _ in $(seq 400); do
	[ -e "$ready" ] && break
	sleep 0.05
done
[ -e "$ready" ] || { echo "the escapee never started" >&2; exit 1; }
echo started
if [ "$1" = hang ]; then
	while :; do sleep 0.2; done
fi
