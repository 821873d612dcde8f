/* A library whose constructor records where it ran: built by
 * TestSandboxColdAttackHostEnv and named by LD_PRELOAD in a request's Env.
 * The sandbox hands a run's environment to the bubblewrap it starts on the
 * host (as root when the agent is root), so the dynamic loader preloads
 * this into that bubblewrap before any namespace exists: code of the
 * request's choosing outside the sandbox. Inside, the library's host path
 * does not exist (the private /tmp hides it) and nothing happens. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void)
{
    const char *path = getenv("COLDATTACK_MARK");
    char line[256];
    int fd;

    if (path == NULL)
        return;
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    snprintf(line, sizeof line, "preloaded: uid=%d pid=%d\n", (int)getuid(), (int)getpid());
    (void)write(fd, line, strlen(line));
    close(fd);
}
