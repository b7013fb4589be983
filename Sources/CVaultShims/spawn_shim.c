#define _GNU_SOURCE
#include "spawn_shim.h"
#include <fcntl.h>
#include <spawn.h>

int vault_spawn_detached(const char *path, char *const argv[], char *const envp[], pid_t *pid) {
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
