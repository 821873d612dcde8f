# Writes an output file and waits for the host to touch "release". Run as
# the root agent's default sandbox user, nobody, it is at the mercy of every
# other host process running as nobody (see TestSandboxColdAttackSharedUID).
echo "what the script wrote" > result.txt
touch started
for i in $(seq 300); do
    [ -e release ] && exit 0
    sleep 0.1
done
echo "never released" >&2
exit 1
