# Ends the helpers above the script (its parent, and any process it may
# signal) after leaving output and a file: the run must still be a run,
# with its output and its files, not "the sandbox is not available".
echo "before the kill"
echo "written before the kill" > kept.txt
kill -KILL "$PPID" 2>/dev/null
for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$pid" = "$$" ] || kill -KILL "$pid" 2>/dev/null
done
sleep 1
echo "not reached: the sandbox ends with its helpers"
