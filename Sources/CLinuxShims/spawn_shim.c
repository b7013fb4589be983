#define _GNU_SOURCE
#include "spawn_shim.h"
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

int CLinuxShims_spawn_detached(const char *path, char *const argv[], char *const envp[], pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) { posix_spawn_file_actions_destroy(&actions); return rc; }
    if ((rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
        (rc = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)) == 0 &&
        (rc = posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)) == 0 &&
        (rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0 &&
        (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID)) == 0) {
        rc = posix_spawn(pid, path, &actions, &attr, argv, envp);
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

int CLinuxShims_spawn_reader(const char *path, char *const argv[], pid_t *pid, int *out_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return errno;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) { close(fds[0]); close(fds[1]); return rc; }
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) { posix_spawn_file_actions_destroy(&actions); close(fds[0]); close(fds[1]); return rc; }
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);   /* vault ignores SIGPIPE; the command must not inherit that */
    if ((rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
        (rc = posix_spawn_file_actions_adddup2(&actions, fds[1], 1)) == 0 &&
        (rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0 &&
        (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
        (rc = posix_spawnattr_setsigdefault(&attr, &defaults)) == 0 &&
        (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF)) == 0) {
        rc = posix_spawn(pid, path, &actions, &attr, argv, environ);
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) { close(fds[0]); return rc; }
    *out_fd = fds[0];
    return 0;
}
