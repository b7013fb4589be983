#define _GNU_SOURCE
#include "agent_shim.h"
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int CLinuxShims_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

int CLinuxShims_die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
    return getppid() == parent ? 0 : -1;
}

void CLinuxShims_release_free_memory(void) { malloc_trim(0); }
