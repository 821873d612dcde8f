# Leaves busy background processes with stdio on /dev/null and exits at
# once: they must all be dead before the run's files are collected.
for i in 1 2 3; do
    nohup sh -c 'while :; do echo x >> busy.txt; done' >/dev/null 2>&1 &
done
until [ -s busy.txt ]; do sleep 0.01; done
echo started
